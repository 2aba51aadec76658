import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'] } },
  test: {
    include: ['packages/*/src/**/*.test.ts', 'apps/*/src/**/*.test.ts', 'examples/*/src/**/*.test.ts', 'tests/**/*.test.ts'],
    globalSetup: ['./packages/services/src/vitest-global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    reporters: ['default', './packages/services/src/missing-services-reporter.ts'],
  },
});
