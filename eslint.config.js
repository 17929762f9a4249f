// Type-aware lint (see shared STYLE.md, habit 12) and the boundaries between packages (habit: "boundaries are
// checked by a machine").
import { readdirSync } from 'node:fs';
import js from '@eslint/js';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import importX from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';
import noImportCycle from './eslint-rules/no-import-cycle.js';

/** Every folder under services/, read here so that a new service is fenced in without an edit. */
const SERVICES = readdirSync(`${import.meta.dirname}/services`, { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name);

/** The source folders the boundary rules watch: what ships, and the development tools (the sandbox). */
const SRC = ['packages/*/src/**/*.ts', 'services/*/src/**/*.ts', 'tools/*/src/**/*.ts'];

/**
 * Production code: every package's and service's src, except core's `testing` entry point
 * (`@agent-saga/core/testing`, a test helper itself). The development tools under `tools/` (the sandbox, a
 * stand-in for the vendors used by tests, the demo and the soak) are not production code.
 */
const PRODUCTION = [
  'packages/{ai-sdk,openai-agents,cli,client,connectors}/src/**',
  'packages/saga-core/src/*.ts',
  'packages/saga-core/src/!(testing)/**',
  ...SERVICES.map((s) => `services/${s}/src/**`),
];

/**
 * The agent-framework integrations, by package folder: each reaches the harness only through
 * `@agent-saga/client` (HTTP), so an agent backend that installs one pulls in no Postgres driver.
 */
const FRAMEWORK_ADAPTERS = { 'ai-sdk': 'AI SDK', 'openai-agents': 'OpenAI Agents SDK' };

/**
 * Which folder may import which, checked on resolved paths (so `@agent-saga/dispatcher` and
 * `../../dispatcher/src/…` are the same import). Each zone forbids its `target` files to import `from`.
 */
const ZONES = [
  ...SERVICES.map((s) => ({
    target: `services/${s}/src`,
    from: SERVICES.filter((o) => o !== s).map((o) => `services/${o}`),
    message: 'Services never import one another: what two services share lives in @agent-saga/core.',
  })),
  {
    target: 'packages/saga-core/src',
    from: ['services', 'packages/connectors', 'packages/cli', 'packages/client'],
    message: 'Core imports no service and no connector: they depend on it, never the other way round.',
  },
  ...Object.entries(FRAMEWORK_ADAPTERS).map(([pkg, framework]) => ({
    target: `packages/${pkg}/src`,
    from: ['packages/saga-core', 'services', 'packages/connectors', 'packages/cli'],
    message: `The ${framework} integration talks to the harness over HTTP through @agent-saga/client: no core, no service.`,
  })),
  {
    target: PRODUCTION,
    from: ['tools/**'],
    message:
      'Production code never imports the sandbox: it is a stand-in for the vendors, for tests and demos.',
  },
  {
    target: PRODUCTION,
    from: [
      'test/**',
      'packages/*/test/**',
      'services/*/test/**',
      'tools/*/test/**',
      'packages/saga-core/src/testing/**',
    ],
    message: 'Production code never imports test helpers (test/, */test/, @agent-saga/core/testing).',
  },
];

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // Migrations are frozen in time: what a committed one creates never changes, so it imports nothing
    // live (a status object that grows would change it). Types are fine: they leave nothing at run time.
    files: ['packages/saga-core/src/db/migrations/**/*.ts', 'packages/connectors/src/migrations/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['../*', '@agent-saga/*'],
              allowTypeImports: true,
              message: 'A migration imports nothing live: spell its lists out as they stand (see README).',
            },
          ],
        },
      ],
    },
  },
  {
    files: SRC,
    plugins: { 'import-x': importX, local: { rules: { 'no-import-cycle': noImportCycle } } },
    settings: {
      // Resolves as tsc does: NodeNext `.js` specifiers to `.ts` files, workspace packages through `exports`.
      'import-x/resolver-next': [
        createTypeScriptImportResolver({ project: `${import.meta.dirname}/tsconfig.json` }),
      ],
    },
    rules: {
      'import-x/no-restricted-paths': ['error', { basePath: import.meta.dirname, zones: ZONES }],
      'local/no-import-cycle': 'error',
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
  },
);
