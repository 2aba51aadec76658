import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { importX } from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import { noImportCycle } from './scripts/eslint/no-import-cycle.js';

/** No code outside packages/store reaches into a store's `db` (a `no-restricted-syntax` entry). */
const STORE_DB_IS_THE_STORES = {
  selector: "MemberExpression[property.name='db']",
  message: "the store's db is the store's own: give the store a method for this",
};

/**
 * The packages' layers (docs/architecture.md): engine <- store <- runtime <- queue <- apps, the client
 * standalone beside them. For each package, the `@cairn/*` packages above it, which it must not import.
 */
const LAYERS_ABOVE = {
  'packages/engine': ['store', 'runtime', 'queue', 'producer', 'worker', 'client'],
  'packages/store': ['runtime', 'queue', 'producer', 'worker', 'client'],
  'packages/runtime': ['queue', 'producer', 'worker', 'client'],
  'packages/queue': ['store', 'producer', 'worker', 'client'],
  'packages/client': ['engine', 'store', 'runtime', 'queue', 'producer', 'worker', 'services'],
  'apps/producer': ['worker'],
  'apps/worker': ['producer'],
};

/** The one tsconfig that covers every linted TypeScript file; type-aware rules and import resolution both read it. */
const project = './tsconfig.check.json';

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', 'bench/peers/**', '**/.cairn/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    plugins: { cairn: { rules: { 'no-import-cycle': noImportCycle } } },
    rules: {
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
    },
  },
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: { project, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { 'import-x': importX },
    settings: {
      'import-x/extensions': importX.flatConfigs.typescript.settings['import-x/extensions'],
      'import-x/parsers': importX.flatConfigs.typescript.settings['import-x/parsers'],
      'import-x/resolver-next': [
        createTypeScriptImportResolver({
          project,
          conditionNames: ['source', 'types', 'import', 'node', 'default'],
        }),
      ],
    },
    rules: {
      // A promise nobody awaits loses its rejection: await it, or mark it `void` where it runs on its own on purpose.
      '@typescript-eslint/no-floating-promises': 'error',
      // An async callback where a sync one is expected (event emitters, array methods) drops its rejection.
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      // Import cycles make load order matter and hide which module owns what.
      'import-x/no-cycle': ['error', { ignoreExternal: false }],
      // import-x/no-cycle skips type-only imports; this one counts them too.
      'cairn/no-import-cycle': 'error',
    },
  },
  {
    // The store port is the only way in: no code outside packages/store reaches into a store's `db` for SQL of its
    // own (tests may read tables to verify). Ask the store for a method instead (`ping()`, `browserSessions`).
    files: ['apps/*/src/**/*.ts', 'packages/*/src/**/*.ts', 'examples/*/src/**/*.ts'],
    ignores: ['packages/store/**', '**/*.test.ts', '**/test-support/**'],
    rules: {
      'no-restricted-syntax': ['error', STORE_DB_IS_THE_STORES],
    },
  },
  {
    // The engine's layers, type imports included: lifecycle/ (every move of a run) calls runner/ (executes) and
    // hitl/; runner/ calls hitl/; none calls back. What two of them share sits in a module of src/ they both import.
    files: ['packages/engine/src/**/*.ts'],
    rules: {
      'import-x/no-restricted-paths': [
        'error',
        {
          zones: [
            {
              target: './packages/engine/src/runner',
              from: './packages/engine/src/lifecycle',
              message:
                'the lifecycle calls the runner, never the reverse: move what both need to a module of src/',
            },
            {
              target: './packages/engine/src/hitl',
              from: ['./packages/engine/src/runner', './packages/engine/src/lifecycle'],
              message:
                'hitl/ is called by the runner and the lifecycle, never the reverse: move what both need to a module of src/',
            },
          ],
        },
      ],
    },
  },
  {
    // The producer's pages sit on its API, never the reverse: a module outside ui/ imports nothing from it
    // but the app that mounts the pages (app.ts) and the package's entry (index.ts).
    files: ['apps/producer/src/**/*.ts'],
    ignores: ['apps/producer/src/ui/**', 'apps/producer/src/app.ts', 'apps/producer/src/index.ts'],
    rules: {
      'import-x/no-restricted-paths': [
        'error',
        {
          zones: [
            {
              target: './apps/producer/src',
              from: './apps/producer/src/ui',
              message:
                'the pages use the API, never the reverse: move what both need out of ui/ (app.ts mounts the pages)',
            },
          ],
        },
      ],
    },
  },
  {
    // One clock: the lifecycle, the runner and human in the loop read the time from the engine's clock
    // (EngineOptions.clock), so a rule of time (a deadline, an expiry, a call's times) is decided on the
    // clock a test can set (TestClock in @cairn/engine/testing).
    files: [
      'packages/engine/src/lifecycle/**/*.ts',
      'packages/engine/src/runner/**/*.ts',
      'packages/engine/src/hitl/**/*.ts',
    ],
    ignores: ['**/*.test.ts'],
    rules: {
      // Flat config replaces a rule's options: the store's restriction is restated with this one.
      'no-restricted-syntax': [
        'error',
        STORE_DB_IS_THE_STORES,
        {
          selector: "CallExpression[callee.object.name='Date'][callee.property.name='now']",
          message:
            "read the time from the engine's clock (resources.clock, state.clock), not Date.now()",
        },
        {
          selector: "NewExpression[callee.name='Date'][arguments.length=0]",
          message:
            "read the time from the engine's clock (resources.clock, state.clock), not new Date()",
        },
      ],
    },
  },
  // A package imports only from the layers below it (LAYERS_ABOVE), type imports included.
  ...packageLayers(LAYERS_ABOVE),
  {
    // One owner carries out the moves (docs/architecture.md, "The walk of a run"): in the queue, only
    // RunEngine carries out the lifecycle's job intents; the worker's processor and the reconciler call it.
    // Flat config replaces a rule's options: the queue's layer patterns are restated with this one.
    files: ['packages/queue/src/**/*.ts'],
    ignores: ['**/*.test.ts', 'packages/queue/src/run-engine.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            layerPattern('packages/queue', LAYERS_ABOVE['packages/queue']),
            {
              group: ['**/carry-out-intents.js'],
              message:
                "the lifecycle's intents are carried out by RunEngine (run-engine.ts): make the move a call on it",
            },
          ],
        },
      ],
    },
  },
  {
    // A run job is moved (delayed, handed back, promoted) by RunEngine only: park, parkAgain, handBack and
    // wake. The webhooks' own queue moves its delivery jobs itself.
    files: ['packages/queue/src/**/*.ts'],
    ignores: ['**/*.test.ts', 'packages/queue/src/run-engine.ts', 'packages/queue/src/webhooks/**'],
    rules: {
      // Flat config replaces a rule's options: the store's restriction is restated with this one.
      'no-restricted-syntax': [
        'error',
        STORE_DB_IS_THE_STORES,
        {
          selector: 'CallExpression[callee.property.name=/^(moveToDelayed|moveToWait|promote)$/]',
          message:
            'a run job is moved by RunEngine (run-engine.ts: park, parkAgain, handBack, wake): make the move a call on it',
        },
      ],
    },
  },
);

/** One config per package: the `@cairn/*` packages above it, which it must not import. */
function packageLayers(above) {
  return Object.entries(above).map(([dir, names]) => ({
    files: [`${dir}/src/**/*.ts`],
    // A package's tests may reach across the layers to check them working together.
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [layerPattern(dir, names)] }],
    },
  }));
}

/** The `no-restricted-imports` pattern that keeps `dir` from importing the packages `names` above it. */
function layerPattern(dir, names) {
  return {
    group: names.flatMap((name) => [`@cairn/${name}`, `@cairn/${name}/*`]),
    message: `${dir} does not import this package (docs/architecture.md, "Layers"): move what both need down a layer, or take it through a port`,
  };
}
