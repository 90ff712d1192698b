import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import noPrototypeLookup from './tools/eslint/no-prototype-lookup.mjs';

export default tseslint.config(
  {
    ignores: [
      'dist/',
      'node_modules/',
      'coverage/',
      'package/',
      '.stryker-tmp*/',
      'reports/',
      '*.js',
      '*.mjs',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      'no-restricted-imports': 'off',
    },
  },
  {
    // Plain Node scripts that run before anything is compiled (scripts/build-if-stale.js).
    files: ['scripts/**/*.js'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: { require: 'readonly', module: 'writable', process: 'readonly', __dirname: 'readonly' },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // No lookup may reach Object.prototype. no-prototype-builtins keeps
    // `x.hasOwnProperty(k)` out; the typed local rule refuses `record[key]` and `key in record`
    // on plain records (string index signatures), where ids such as `constructor` or `__proto__`
    // find inherited members. Typed, and on the app's data path, where keys come from input (the
    // embedded runtime's internals, the CLI and the bench key records by their own names).
    files: [
      'src/domain/**/*.ts',
      'src/services/**/*.ts',
      'src/adapters/**/*.ts',
      'src/functions/**/*.ts',
      'local/report.ts',
    ],
    ignores: ['src/domain/own-properties.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    plugins: { local: { rules: { 'no-prototype-lookup': noPrototypeLookup } } },
    rules: { 'no-prototype-builtins': 'error', 'local/no-prototype-lookup': 'error' },
  },
  {
    // jest.isolateModules needs require() to load a module into a fresh registry.
    files: ['tests/**/*.ts'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['src/domain/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['@azure/*', 'durable-functions', 'applicationinsights'],
              message: 'The domain imports nothing from Azure.',
            },
            {
              group: [
                'node:fs',
                'fs',
                'node:net',
                'net',
                'node:http',
                'http',
                'node:https',
                'https',
                'node:child_process',
                'child_process',
                'node:dns',
                'dns',
                '../services/*',
                '../adapters/*',
                '../functions/*',
                '../embedded/*',
                '../cli/*',
                '../bench/*',
              ],
              message: 'The domain does no I/O and depends on nothing outside domain.',
            },
          ],
        },
      ],
    },
  },
);
