/**
 * The public API as users see it: API Extractor reads the declarations the
 * package ships (dist/cjs, built with `stripInternal`, so `@internal` names
 * are gone) for each entry of the "exports" map and writes one report per
 * entry to etc/ (`nest-lock.api.md`, `nest-lock-redis.api.md`, ...).
 *
 *   node scripts/api-report.mjs           check: fails, with a diff, when the API differs from the committed reports
 *   node scripts/api-report.mjs --update  rewrites the reports (`npm run api:update` builds first)
 *
 * Both fail on a type error in the shipped declarations (for example a public
 * declaration that names an `@internal` one, which `stripInternal` removed).
 * The build must be current (`npm run build`, or `npm run build:all` as
 * `npm test` does).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CompilerState, Extractor, ExtractorConfig, ExtractorLogLevel } from '@microsoft/api-extractor';

const root = fileURLToPath(new URL('..', import.meta.url));
const update = process.argv.includes('--update');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const reportFolder = join(root, 'etc');
const tempFolder = join(root, 'dist/api-report');

/** Each entry of the "exports" map: its report's name and the CommonJS declarations it points at. */
const entries = Object.entries(pkg.exports)
  .filter(([subpath]) => subpath !== './package.json')
  .map(([subpath, target]) => ({
    subpath,
    report: subpath === '.' ? pkg.name : `${pkg.name}-${subpath.slice(2).replaceAll('/', '-')}`,
    types: join(root, target.require.types),
  }));

for (const { types } of entries) {
  if (!existsSync(types)) {
    console.error(`${relative(root, types)} is missing: run \`npm run build\` before the API report`);
    process.exit(1);
  }
}
mkdirSync(reportFolder, { recursive: true });
rmSync(tempFolder, { recursive: true, force: true });

function configFor({ report, types }) {
  return ExtractorConfig.prepare({
    configObject: {
      projectFolder: root,
      mainEntryPointFilePath: types,
      newlineKind: 'lf',
      compiler: {
        overrideTsconfig: {
          compilerOptions: {
            target: 'ES2022',
            module: 'NodeNext',
            moduleResolution: 'NodeNext',
            lib: ['ES2023'],
            types: ['node'],
            strict: true,
            experimentalDecorators: true,
            esModuleInterop: true,
          },
          files: entries.map((e) => e.types),
        },
      },
      apiReport: { enabled: true, reportFileName: report, reportFolder, reportTempFolder: tempFolder },
      docModel: { enabled: false },
      dtsRollup: { enabled: false },
      tsdocMetadata: { enabled: false },
      messages: {
        // A type error in the shipped declarations fails the run.
        compilerMessageReporting: { default: { logLevel: 'error' } },
        extractorMessageReporting: {
          default: { logLevel: 'warning' },
          // The project marks internals with @internal only; everything else is public.
          'ae-missing-release-tag': { logLevel: 'none' },
          'ae-internal-missing-underscore': { logLevel: 'none' },
          // A type the API uses but no entry exports is listed in the report, where a review sees it.
          'ae-forgotten-export': { logLevel: 'none', addToApiReportFile: true },
          // JSDoc links name members and other entries' exports, which API Extractor resolves only within one entry.
          'ae-unresolved-link': { logLevel: 'none' },
          'ae-unresolved-inheritdoc-reference': { logLevel: 'none' },
          'ae-unresolved-inheritdoc-base': { logLevel: 'none' },
          'ae-undocumented': { logLevel: 'none' },
        },
        // The JSDoc is written for editors, not checked as TSDoc.
        tsdocMessageReporting: { default: { logLevel: 'none' } },
      },
    },
    configObjectFullPath: join(root, 'scripts/api-report.mjs'),
    packageJsonFullPath: join(root, 'package.json'),
  });
}

const configs = entries.map(configFor);
// One TypeScript program for all entries.
const compilerState = CompilerState.create(configs[0], { additionalEntryPoints: entries.map((e) => e.types) });
let failed = false;
const changed = [];
/** Compiler messages of the shared program come once per entry: each is shown once. */
const shown = new Set();
for (const [i, config] of configs.entries()) {
  const result = Extractor.invoke(config, {
    localBuild: update,
    compilerState,
    messageCallback(message) {
      // API Extractor's own line for a changed report is replaced by the diff below.
      if (/^console-api-report-(not-copied|copied|created|diff)$/.test(message.messageId)) {
        message.handled = true;
      } else if (message.logLevel === ExtractorLogLevel.Info || message.logLevel === ExtractorLogLevel.Verbose) {
        message.handled = true;
      } else if (message.category === 'Compiler') {
        const text = message.formatMessageWithLocation(root);
        if (shown.has(text)) message.handled = true;
        shown.add(text);
      }
    },
  });
  if (result.errorCount > 0) failed = true;
  if (result.apiReportChanged) changed.push(entries[i]);
}

if (update) {
  for (const { report } of changed) console.log(`updated etc/${report}.api.md`);
  if (changed.length === 0) console.log('the API reports in etc/ are up to date');
} else if (changed.length > 0) {
  failed = true;
  for (const { report, subpath } of changed) {
    console.error(`\nThe public API of "${subpath}" differs from etc/${report}.api.md:`);
    const diff = spawnSync(
      'git',
      [
        'diff',
        '--no-index',
        '--no-color',
        `etc/${report}.api.md`,
        relative(root, join(tempFolder, `${report}.api.md`)),
      ],
      {
        cwd: root,
        encoding: 'utf8',
      },
    );
    console.error(diff.stdout || `(etc/${report}.api.md is missing)`);
  }
  console.error('If the change is intended, run `npm run api:update` and commit etc/*.api.md.');
}
process.exit(failed ? 1 : 0);
