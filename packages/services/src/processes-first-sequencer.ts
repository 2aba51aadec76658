import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** What a test file that starts processes (workers, producers, the demo, npm, tsc) calls. */
const STARTS_PROCESSES =
  /\b(startFleet|startOpsFleet|startUiStack|spawnApp|spawnWorker|spawnProducer|execFile|execFileSync|spawn)\b/;

function startsProcesses(spec: TestSpecification): boolean {
  try {
    return STARTS_PROCESSES.test(readFileSync(spec.moduleId, 'utf8'));
  } catch {
    return false;
  }
}

/**
 * Vitest sequencer: vitest's own order (slowest first by an earlier run's
 * durations), except that when some file has no recorded duration (a fresh
 * clone) the files that start processes go first. Those are the long ones,
 * waiting on workers and timers, and one left for the end holds the whole
 * run up while the quick in-process files have long finished beside it.
 */
export default class ProcessesFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const known = (spec: TestSpecification) =>
      this.ctx.cache.getFileTestResults(
        `${spec.project.name}:${relative(this.ctx.config.root, spec.moduleId)}`,
      ) !== undefined;
    if (sorted.every(known)) return sorted;
    const first = sorted.filter(startsProcesses);
    return [...first, ...sorted.filter((spec) => !first.includes(spec))];
  }
}
