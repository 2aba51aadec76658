import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import ProcessesFirstSequencer from './packages/services/src/processes-first-sequencer.js';

export default defineConfig({
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'] } },
  test: {
    include: [
      'packages/*/src/**/*.test.ts',
      'apps/*/src/**/*.test.ts',
      'examples/*/src/**/*.test.ts',
      'tests/**/*.test.ts',
    ],
    globalSetup: ['./packages/services/src/vitest-global-setup.ts'],
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
  },
});
