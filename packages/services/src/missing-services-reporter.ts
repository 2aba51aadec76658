import type { Reporter, TestModule } from 'vitest/node';
import type { MachineRequirement } from './test-requirements.js';

/** Vitest reporter that closes the run with one line naming what to install for the tests skipped for a missing binary. */
export default class MissingServicesReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const skipped = new Map<string, { requirement: MachineRequirement; count: number }>();
    for (const module of testModules) {
      for (const test of module.children.allTests('skipped')) {
        const requirement = test.meta().requires;
        if (!requirement) continue;
        const entry = skipped.get(requirement.binary) ?? { requirement, count: 0 };
        entry.count += 1;
        skipped.set(requirement.binary, entry);
      }
    }
    if (skipped.size === 0) return;
    const parts = [...skipped.values()].map(({ requirement, count }) =>
      count === 1
        ? `skipped 1 test that needs ${requirement.binary}; to run it: ${requirement.install}`
        : `skipped ${count} tests that need ${requirement.binary}; to run them: ${requirement.install}`,
    );
    process.stdout.write(`\n${parts.join(' | ')}\n`);
  }
}
