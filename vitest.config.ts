import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import ProcessesFirstSequencer from './packages/services/src/processes-first-sequencer.js';

/** Every test file: beside the code in each workspace, and the cross-package scenarios in tests/. */
const TEST_FILES = [
  'packages/*/src/**/*.test.ts',
  'apps/*/src/**/*.test.ts',
  'examples/*/src/**/*.test.ts',
  'tests/**/*.test.ts',
];

/**
 * The first layer: pure rules (lifecycle tables, decisions, budgets, parsing, adapters against a
 * local server the test starts itself). They need no Postgres, no Redis and no spawned app.
 */
const UNIT_TEST_FILES = ['**/*.unit.test.ts'];

export default defineConfig({
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'] } },
  test: {
    // The `source` condition also picks a dependency's TypeScript sources where it ships them
    // (eventsource-parser, under the MCP SDK): Vite compiles those instead of Node loading them.
    server: { deps: { inline: [/@modelcontextprotocol\/sdk/, 'eventsource-parser'] } },
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Most files wait on processes (workers, producers, Postgres) rather than compute: on 2 cores,
    // 4 files at a time keep both busy; vitest's default (cores - 1) would run one at a time.
    maxWorkers: Math.max(4, availableParallelism() - 1),
    sequence: { sequencer: ProcessesFirstSequencer },
    // expect.poll waits for what a page or a process shows; vitest's 1 s is short on a loaded machine.
    expect: { poll: { timeout: 15_000 } },
    reporters: ['default', './packages/services/src/missing-services-reporter.ts'],
    projects: [
      // `npm run test:unit` runs this layer alone, in seconds: it starts no service.
      { extends: true, test: { name: 'unit', include: UNIT_TEST_FILES } },
      {
        extends: true,
        test: {
          name: 'services',
          include: TEST_FILES,
          exclude: UNIT_TEST_FILES,
          // Postgres, Redis and the compiled apps, started once per run for the files that use them.
          globalSetup: ['./packages/services/src/vitest-global-setup.ts'],
        },
      },
    ],
  },
});
