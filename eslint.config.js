import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** The HTTP adapter depends on the core and its HTTP libraries only. */
const httpAdapterOnly = {
  regex: '^(@hortus/(?!core$)|mongodb$|mqtt$|better-sqlite3$)',
  message: 'The HTTP adapter depends on the core and its HTTP libraries only.',
};
const noKoa = (message) => ({ regex: '^(koa|@koa/.*)$', message });
const noFolders = (folders, message) => ({ regex: `^\\.\\./(${folders.join('|')})/`, message });

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', 'tools/**', 'bench/results/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['packages/*/src/**/*.ts', 'packages/*/src/**/*.tsx', 'packages/*/test/**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // Every promise is awaited or explicitly handled: a forgotten await hides failures.
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      'no-restricted-syntax': [
        'error',
        { selector: 'TSEnumDeclaration', message: 'Use a union or an as-const object instead of an enum.' },
        { selector: 'ExportDefaultDeclaration', message: 'Use named exports.' },
      ],
    },
  },
  // The way dependencies point (hexagonal): core is pure; transports and stores know only the core; the
  // composition root (packages/cli) is the one place that knows them all. Tests may reach further.
  {
    files: ['packages/core/src/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            // temporal-polyfill is computation only (time-zone rules), no I/O.
            {
              regex: '^(?!inversify$|temporal-polyfill$|\\.{1,2}/)',
              message: 'core is pure: it imports inversify and temporal-polyfill only.',
            },
          ],
        },
      ],
    },
  },
  {
    files: [
      'packages/http-koa/src/**/*.ts',
      'packages/mqtt/src/**/*.ts',
      'packages/adapter-*/src/**/*.ts',
      'packages/identity/src/**/*.ts',
      'packages/mail/src/**/*.ts',
    ],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^@hortus/(?!core$)',
              message:
                'Transports and stores depend on the core only; the composition root (cli) wires them.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['packages/http-koa/src/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [httpAdapterOnly] }] },
  },
  // Inside the HTTP adapter (docs/development.md, "The HTTP adapter"): routes/ declares, exchange/ decides,
  // koa/ and lane/ carry. A later block's rule replaces an earlier one's, so each repeats httpAdapterOnly.
  {
    files: ['packages/http-koa/src/routes/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            httpAdapterOnly,
            noKoa('routes/ only declares routes: Koa belongs to koa/.'),
            noFolders(
              ['exchange', 'koa', 'lane'],
              'routes/ only declares: the doors and the exchange read it, not the reverse.',
            ),
          ],
        },
      ],
    },
  },
  {
    files: ['packages/http-koa/src/exchange/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            httpAdapterOnly,
            noKoa('exchange/ decides for every door, so it knows no framework: Koa belongs to koa/.'),
            noFolders(['koa', 'lane'], 'exchange/ decides; the doors (koa/, lane/) use it, not the reverse.'),
          ],
        },
      ],
    },
  },
  {
    files: ['packages/http-koa/src/lane/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            httpAdapterOnly,
            noKoa("A lane answers on Node's request without Koa."),
            noFolders(['koa'], "A lane writes the exchange's answer itself; koa/ is the other door."),
          ],
        },
      ],
    },
  },
  {
    files: ['packages/http-koa/src/koa/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [httpAdapterOnly, noFolders(['lane'], 'The Koa door does not reach into the lanes.')] },
      ],
    },
  },
  // The console is a browser bundle: core's index would bring inversify and reflect-metadata into it, so it
  // takes the one pure file it needs, core's list of topics (names and units), and nothing else of Hortus.
  {
    files: ['packages/console/src/**/*.ts', 'packages/console/src/**/*.tsx'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(@hortus/|(\\.\\./)+(?!core/src/readings/topics\\.js$)[^./][^/]*/src/)',
              message:
                "The console imports core's src/readings/topics.ts only, as a file (no DI in the bundle).",
            },
          ],
        },
      ],
    },
  },
  {
    files: ['**/*.js', '**/*.cjs', '**/*.mjs'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
    languageOptions: {
      globals: { process: 'readonly', console: 'readonly', require: 'readonly', module: 'writable' },
    },
  },
);
