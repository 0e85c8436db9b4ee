// ESLint (flat config): the recommended JavaScript and typescript-eslint rules (not the type-checked
// preset: it takes half a minute here); formatting is Prettier's (`npm run format`), so no style rules.
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import { defineConfig } from 'eslint/config';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default defineConfig(
  // test/apps are apps of their own, as `nest new` writes them; bench/results and etc/ are generated.
  { ignores: ['dist/', 'coverage/', 'test/apps/', 'bench/results/', 'etc/'] },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    languageOptions: { globals: globals.node },
    rules: {
      // A leading underscore marks a parameter or binding that is there on purpose (a signature, a rest sibling).
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          argsIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          caughtErrorsIgnorePattern: '^_',
          destructuredArrayIgnorePattern: '^_',
          ignoreRestSiblings: true,
        },
      ],
    },
  },
  // A .cts file is CommonJS on purpose: it exists to call require().
  { files: ['**/*.cts'], rules: { '@typescript-eslint/no-require-imports': 'off' } },
  // A store author's CommonJS test file (the conformance kit under Jest, from the packed tarball).
  { files: ['test/package/kit-consumer/*.cjs'], rules: { '@typescript-eslint/no-require-imports': 'off' } },
  prettier,
);
