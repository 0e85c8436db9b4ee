/** Jest on ESM with SWC: legacy decorators and decorator metadata, as Nest needs. */
const swc = {
  jsc: {
    parser: { syntax: 'typescript', decorators: true },
    transform: { legacyDecorator: true, decoratorMetadata: true },
    target: 'es2022',
    keepClassNames: true,
  },
  module: { type: 'es6' },
  sourceMaps: 'inline',
};

export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  moduleFileExtensions: ['ts', 'cts', 'js', 'mjs', 'cjs', 'json', 'node'],
  transform: {
    '^.+\\.ts$': ['@swc/jest', swc],
    // .cts files are CommonJS, as Node runs their compiled .cjs.
    '^.+\\.cts$': ['@swc/jest', { ...swc, module: { type: 'commonjs' } }],
  },
  // lib's .cts sources are imported as .cjs; packages' own .cjs files (e.g. @opentelemetry/*) stay as they are.
  // The package's own name (the sample imports `nest-lock`) is lib/'s sources here, as tsconfig.json's paths are for tsc:
  // one copy of the classes with the tests' own imports of lib/. Node resolves it to the build (dist/) at run time.
  moduleNameMapper: {
    '^(\\.{1,2}/.*)\\.js$': '$1',
    '^(\\.{1,2}/(?:.*/)?(?:require-peer|lua-source|sql-source))\\.cjs$': '$1.cts',
    '^nest-lock$': '<rootDir>/lib/index.ts',
    '^nest-lock/(health|dashboard|testing)$': '<rootDir>/lib/$1/index.ts',
    '^nest-lock/(redis|postgres|mysql)$': '<rootDir>/lib/stores/$1/index.ts',
  },
  testMatch: ['<rootDir>/test/**/*.spec.ts'],
  // The example apps under test/apps run their own specs with their own runners.
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/apps/'],
  testTimeout: 30000,
};
