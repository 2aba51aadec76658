import pg from 'pg';
import { createDb, migrate } from '@cairn/store';
import { runChild } from '../lib/child.js';
import { FigureSink } from '../lib/attempt.js';
import { fmt, medianFigure } from '../lib/figure.js';
import { buildCompiledWorker, productionNodeFlags } from '../lib/compiled-worker.js';
import { executionMode, startWorker, type WorkerConfig } from '../lib/fleet.js';
import { procMemoryMb, sampleMax } from '../lib/proc-memory.js';
import { enqueueRuns, openClient, waitForTerminal, type QueueTarget } from '../lib/producer.js';
import type { Section } from '../lib/section.js';
import { median } from '../lib/stats.js';
import { sleep } from '../lib/timing.js';

const ID = 'memory';
const LOADS = [1, 100] as const;
/** Tool and model latency, so that 100 runs are in flight at once. */
const WORKLOAD_ENV = { BENCH_TOOL_MS: '200', BENCH_MODEL_MS: '20' };
const GOAL = { op: '<=', bound: 150 } as const;

/** Peak RSS per load (MB) after an idle baseline, from one process. */
interface MemoryResult {
  baselineMb: number;
  peaks: Record<number, number>;
}

/** One way of running the worker process. */
interface WorkerVariant {
  label: string;
  config: Pick<WorkerConfig, 'script' | 'registry' | 'executionThreads' | 'nodeFlags'>;
}

async function workerPeaks(
  target: QueueTarget,
  pool: pg.Pool,
  variant: WorkerVariant,
  label: string,
  log: (m: string) => void,
): Promise<MemoryResult> {
  const worker = startWorker({
    ...target,
    ...variant.config,
    workerId: `memory-${label}`,
    concurrency: 100,
    env: WORKLOAD_ENV,
  });
  const client = await openClient(target);
  try {
    await worker.ready;
    await sleep(1000);
    const baselineMb = (await procMemoryMb(worker.pid))?.rss ?? Number.NaN;
    const peaks: Record<number, number> = {};
    for (const runs of LOADS) {
      log(`${variant.label}: ${runs} run(s)`);
      const peak = sampleMax(async () => (await procMemoryMb(worker.pid))?.rss, 20);
      const created = await enqueueRuns(client, runs);
      await waitForTerminal(
        pool,
        created.map((r) => r.runId),
        120_000,
      );
      peaks[runs] = await peak.stop();
    }
    return { baselineMb, peaks };
  } finally {
    await client.close();
    await worker.stop();
  }
}

/** The label of the variant that carries the goal: the worker as the image runs it. */
const PRODUCTION = 'production worker (compiled JS, execution thread)';

/** The worker variants measured: the production worker first (it carries the goal); from sources (tsx) in full runs. */
async function workerVariants(quick: boolean, notes: string[]): Promise<WorkerVariant[]> {
  const fromSources: WorkerVariant[] = [
    { label: 'worker from sources (tsx), execution thread', config: {} },
    {
      label: 'worker from sources (tsx), CAIRN_EXECUTION_THREADS=0',
      config: { executionThreads: 0 },
    },
  ];
  try {
    const compiled = await buildCompiledWorker();
    const js = { script: compiled.script, registry: compiled.registry };
    const production: WorkerVariant = {
      label: PRODUCTION,
      config: { ...js, nodeFlags: productionNodeFlags() },
    };
    notes.push(
      `${PRODUCTION}: node flags ${productionNodeFlags().join(' ') || 'none'}, as \`npm run worker\` and the image start it`,
    );
    if (quick) return [production];
    return [
      production,
      { label: 'compiled JS, no node flags', config: js },
      {
        label: 'compiled JS, no node flags, CAIRN_EXECUTION_THREADS=0',
        config: { ...js, executionThreads: 0 },
      },
      ...fromSources,
    ];
  } catch (error) {
    notes.push(
      `compiled worker not measured: esbuild failed: ${(error as Error).message.slice(0, 200)}`,
    );
    return quick ? fromSources.slice(0, 1) : fromSources;
  }
}

function record(sink: FigureSink, what: string, results: readonly MemoryResult[]): void {
  for (const runs of LOADS) {
    const peaks = results.map((r) => r.peaks[runs] ?? Number.NaN);
    const goal = what === PRODUCTION && runs === 100 ? GOAL : undefined;
    sink.figures.push(
      medianFigure(ID, `${what} peak RSS, ${runs} concurrent runs`, peaks, 'MB', { goal }),
    );
  }
  sink.notes.push(
    `${what}: idle RSS ${fmt(median(results.map((r) => r.baselineMb)))} MB before the runs`,
  );
}

/** Section 3 (issue item 6): RSS with 1 and 100 concurrent runs, in one Engine process and in a worker process. */
export const memorySection: Section = {
  id: ID,
  title: 'Memory',
  cairn: true,
  async run({ quick, services, log }) {
    const database = await services.database(ID);
    const db = createDb(database.url);
    await migrate(db);
    await db.destroy();
    const reps = quick ? 1 : 3;
    const sink = new FigureSink(ID, log);
    const names = (what: string) =>
      LOADS.map((runs) => `${what} peak RSS, ${runs} concurrent runs`);
    if (quick) sink.notes.push('--quick: the in-process engine variant is skipped');
    else
      await sink.part(names('engine process'), async () => {
        log(`in-process engine, ${LOADS.join(' then ')} concurrent runs, ${reps} process(es)`);
        const results: MemoryResult[] = [];
        for (let r = 0; r < reps; r++) {
          results.push(
            await runChild<MemoryResult>('bench/children/engine-memory.ts', {
              args: [LOADS.join(',')],
              env: { DATABASE_URL: database.url },
              nodeFlags: ['--expose-gc'],
            }),
          );
        }
        record(sink, 'engine process', results);
      });
    const redisUrl = await services.redisUrl();
    const target: QueueTarget = {
      databaseUrl: database.url,
      backend: redisUrl ? 'redis' : 'postgres',
      redisUrl,
      queueName: `bench-memory-${Date.now()}`,
    };
    const pool = new pg.Pool({ connectionString: database.url, max: 2 });
    try {
      for (const [v, variant] of (await workerVariants(quick, sink.notes)).entries()) {
        await sink.part(names(variant.label), async () => {
          log(
            `${variant.label} (${target.backend}, WORKER_CONCURRENCY=100), ${LOADS.join(' then ')} runs, ${reps} process(es)`,
          );
          const results: MemoryResult[] = [];
          for (let r = 0; r < reps; r++)
            results.push(await workerPeaks(target, pool, variant, `${v}-${r}`, log));
          record(sink, variant.label, results);
        });
      }
    } finally {
      await pool.end();
    }
    sink.notes.push(
      'each process runs 1, then 100 concurrent runs (3 tool batches of 3 calls, 20 ms model turns, 200 ms tools, so all 100 are in flight together); the production worker is apps/worker compiled to JS (esbuild, what `npm run worker` and the image run, compiled), its main thread renewing locks and one execution thread running the runs; ' +
        executionMode(),
    );
    return { figures: sink.figures, notes: sink.notes, failed: sink.failed };
  },
};
