/**
 * Child process: for each load in turn, executes that many concurrent
 * scripted runs through the Engine in this process and reports the peak RSS
 * (MB), after the idle RSS following a one-run warm-up.
 * Usage: engine-memory.ts <load>[,<load>...]; DATABASE_URL names a migrated database.
 */
import { Engine } from '@cairn/engine';
import { createDb, openStore } from '@cairn/store';
import { BENCH_AGENT, createRegistry } from '../lib/bench-registry.js';
import { reportResult } from '../lib/child-result.js';
import { sampleMax } from '../lib/proc-memory.js';
import { RUN_INPUT } from '../lib/workload.js';

const loads = (process.argv[2] ?? '1').split(',').map(Number);
const mb = (bytes: number) => bytes / 1024 / 1024;
const db = createDb(process.env.DATABASE_URL!, { max: 10 });
const store = openStore(db).writes;
const engine = new Engine({
  store,
  registry: createRegistry({ toolMs: 200, modelMs: 20 }),
  workerId: `memory-${process.pid}`,
});

async function execute(count: number): Promise<void> {
  const created = await Promise.all(
    Array.from({ length: count }, () =>
      engine.createRun({ entity: { kind: 'agent', name: BENCH_AGENT }, input: RUN_INPUT }),
    ),
  );
  const results = await Promise.all(
    created.map((run) => engine.execute(run.runId, { reason: 'run' })),
  );
  const failed = results.filter((r) => r.outcome !== 'finished' || r.run.status !== 'COMPLETED');
  if (failed.length > 0) throw new Error(`${failed.length} runs did not complete`);
}

await execute(1); // warm-up: modules, JIT, pool
(globalThis as { gc?: () => void }).gc?.();
const baselineMb = mb(process.memoryUsage().rss);
const peaks: Record<number, number> = {};
for (const runs of loads) {
  const peak = sampleMax(async () => mb(process.memoryUsage().rss), 10);
  await execute(runs);
  peaks[runs] = await peak.stop();
}
reportResult({ baselineMb, peaks });
await db.destroy();
