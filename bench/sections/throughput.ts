import pg from 'pg';
import type { ProducerService } from '@cairn/producer';
import type { BudgetOption } from '@cairn/engine';
import { FigureSink } from '../lib/attempt.js';
import { fmt, medianFigure, ratioFigure, valueFigure } from '../lib/figure.js';
import {
  createFloorTable,
  enqueueFloorJobs,
  FLOOR_WORKER,
  openFloorQueue,
  waitForFloorRows,
} from '../lib/floor.js';
import {
  executionMode,
  startWorker,
  stopAll,
  type WorkerConfig,
  type WorkerHandle,
} from '../lib/fleet.js';
import {
  completedCount,
  enqueueRuns,
  openClient,
  waitForTerminal,
  type QueueTarget,
} from '../lib/producer.js';
import type { Section, SectionContext } from '../lib/section.js';
import { median, summarize } from '../lib/stats.js';
import { startCpuAccounting, type CpuRoles } from '../lib/cpu-usage.js';
import { statementCensus } from '../lib/statement-census.js';
import { nextXid } from '../lib/wal.js';

const ID = 'throughput';
const WORKER_COUNTS: readonly number[] = [1, 2];
/** JSON bytes one Cairn run writes (input, 3 batches of messages and tool rows, answer), spread over the floor's commits. */
const RUN_BYTES = 11_000;

interface Plan {
  runs: number;
  rounds: number;
  /** Worker process counts measured per backend. */
  workerCounts: Record<'redis' | 'postgres', readonly number[]>;
}

function rateFigure(name: string, rates: readonly number[], unit: string) {
  const s = summarize(rates);
  return valueFigure(
    ID,
    name,
    s.median,
    unit,
    s.n,
    `rounds min..max ${fmt(s.min)}..${fmt(s.max)}`,
    { stats: s },
  );
}

/** CPU seconds per item, all process groups together. */
function cpuTotal(cpu: CpuPerItem): number {
  return Object.values(cpu).reduce((a, b) => a + b, 0);
}

/** CPU seconds per processed run/job, by process group, over one measured round. */
type CpuPerItem = Record<string, number>;

function cpuLine(label: string, cpu: CpuPerItem, wallMsPerItem: number): string {
  const parts = Object.entries(cpu).map(([role, s]) => `${role} ${fmt(s * 1000)}`);
  return `${label}: CPU ms per item: ${parts.join(', ')} (total ${fmt(cpuTotal(cpu) * 1000)}; wall ${fmt(wallMsPerItem)} ms per item on 2 cores = ${fmt(2 * wallMsPerItem)} core-ms available)`;
}

async function withCpu<T>(
  roles: CpuRoles,
  items: number,
  work: () => Promise<T>,
): Promise<{ result: T; cpu: CpuPerItem }> {
  const accounting = await startCpuAccounting(roles);
  const result = await work();
  const used = await accounting.stop();
  return { result, cpu: Object.fromEntries(Object.entries(used).map(([k, v]) => [k, v / items])) };
}

/** Starts `count` more workers of `base` until `workers` holds `count`. */
async function scaleTo(
  workers: WorkerHandle[],
  count: number,
  base: Omit<WorkerConfig, 'workerId'>,
  prefix: string,
): Promise<void> {
  while (workers.length < count)
    workers.push(startWorker({ ...base, workerId: `${prefix}-${workers.length + 1}` }));
  await Promise.all(workers.map((w) => w.ready));
}

/** The server process of `poller`'s one connection (a pool of one that never lets it go idle out). */
async function backendPid(poller: pg.Pool): Promise<number> {
  const { rows } = await poller.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
  return Number(rows[0]?.pid);
}

async function cairnRounds(
  client: ProducerService,
  pool: pg.Pool,
  poller: pg.Pool,
  plan: Plan,
  roles: CpuRoles,
) {
  const rates: number[] = [];
  const txPerRun: number[] = [];
  let cpu: CpuPerItem = {};
  for (let round = 0; round < plan.rounds; round++) {
    const xid = await nextXid(pool);
    const start = performance.now();
    const measured = await withCpu(roles, plan.runs, async () => {
      const runs = await enqueueRuns(client, plan.runs);
      const ids = runs.map((r) => r.runId);
      await waitForTerminal(poller, ids, 300_000);
      return ids;
    });
    rates.push(plan.runs / ((performance.now() - start) / 1000));
    txPerRun.push(((await nextXid(pool)) - xid) / plan.runs);
    if (round === 0) cpu = measured.cpu;
    const completed = await completedCount(pool, measured.result);
    if (completed !== plan.runs)
      throw new Error(`${plan.runs - completed} of ${plan.runs} runs did not complete`);
  }
  return { rates, txPerRun, cpu };
}

async function floorRounds(
  target: QueueTarget,
  pool: pg.Pool,
  poller: pg.Pool,
  plan: Plan,
  commits: number,
  tag: number,
  roles: CpuRoles,
) {
  const queue = await openFloorQueue(target);
  try {
    const rates: number[] = [];
    let cpu: CpuPerItem = {};
    for (let round = 0; round < plan.rounds; round++) {
      await pool.query('TRUNCATE floor_rows');
      const start = performance.now();
      const measured = await withCpu(roles, plan.runs, async () => {
        await enqueueFloorJobs(queue, plan.runs, tag * 100 + round);
        await waitForFloorRows(poller, plan.runs * commits, 300_000);
      });
      rates.push(plan.runs / ((performance.now() - start) / 1000));
      if (round === 0) cpu = measured.cpu;
    }
    return { rates, cpu };
  } finally {
    await queue.close();
  }
}

async function measureBackend(
  context: SectionContext,
  sink: FigureSink,
  backend: 'redis' | 'postgres',
  plan: Plan,
  calibration: { commits?: number },
): Promise<void> {
  const { services, log } = context;
  const database = await services.database(`${ID}_${backend}`);
  const redisUrl = backend === 'redis' ? await services.redisUrl() : undefined;
  const stamp = Date.now();
  const cairnTarget: QueueTarget = {
    databaseUrl: database.url,
    backend,
    redisUrl,
    queueName: `bench-tp-${stamp}`,
  };
  const floorTarget: QueueTarget = { ...cairnTarget, queueName: `bench-floor-${stamp}` };
  const pool = new pg.Pool({ connectionString: database.url, max: 3 });
  // The bench's own wait for the end (a poll every 25 ms) runs on one connection whose backend is left out of Postgres's CPU.
  const poller = new pg.Pool({ connectionString: database.url, max: 1, idleTimeoutMillis: 0 });
  const pollerPid = await backendPid(poller);
  const client = await openClient(cairnTarget);
  const cairn = new Map<number, number[]>();
  const cairnCpu = new Map<number, CpuPerItem>();
  const workers: WorkerHandle[] = [];
  const servers = await services.serverPids();
  const roles = (): CpuRoles => ({
    workers: { pids: workers.map((w) => w.pid) },
    postgres: {
      pids: servers.postgres ? [servers.postgres] : [],
      withChildren: true,
      exclude: [pollerPid],
    },
    ...(backend === 'redis' ? { redis: { pids: servers.redis ? [servers.redis] : [] } } : {}),
    producer: { pids: [process.pid] },
  });
  try {
    await createFloorTable(pool);
    for (const count of plan.workerCounts[backend]) {
      await sink.part([`cairn runs/s, ${backend}, ${count} worker(s)`], async () => {
        await scaleTo(workers, count, cairnTarget, `tp-${backend}`);
        log(`cairn on ${backend}, ${count} worker process(es): ${plan.rounds} x ${plan.runs} runs`);
        const { rates, txPerRun, cpu } = await cairnRounds(client, pool, poller, plan, roles());
        cairn.set(count, rates);
        cairnCpu.set(count, cpu);
        sink.notes.push(
          cpuLine(`cairn, ${backend}, ${count} worker(s)`, cpu, 1000 / median(rates)),
        );
        sink.figures.push(
          rateFigure(`cairn runs/s, ${backend}, ${count} worker(s)`, rates, 'runs/s'),
        );
        const tx = median(txPerRun);
        if (backend === 'redis' || calibration.commits === undefined)
          calibration.commits ??= Math.round(tx);
        if (backend === 'redis' && count === 1) {
          sink.figures.push(
            medianFigure(ID, 'write transactions per run, redis (store only)', txPerRun, 'tx', {
              goal: { op: '<=', bound: 6 },
            }),
          );
        } else {
          sink.notes.push(
            `${backend}, ${count} worker(s): ${fmt(tx)} write transactions per run${backend === 'postgres' ? ' (store and queue: one Postgres)' : ' (store only)'}`,
          );
        }
        const one = cairn.get(1);
        if (count === 2 && one) {
          sink.figures.push(
            // Informational: on 2 shared cores a second worker process measures contention.
            ratioFigure(ID, `cairn runs/s, ${backend}, 2 workers / 1 worker`, rates, one),
          );
        }
      });
    }
    await stopAll(workers.splice(0));
    const commits = calibration.commits ?? 6;
    const floorBase = {
      ...floorTarget,
      script: FLOOR_WORKER,
      env: { FLOOR_COMMITS: String(commits), FLOOR_BYTES: String(Math.round(RUN_BYTES / commits)) },
    };
    for (const count of plan.workerCounts[backend]) {
      const names = [
        `floor jobs/s, ${backend}, ${count} worker(s)`,
        `cairn / floor, ${backend}, ${count} worker(s)`,
        `CPU per run, all processes, cairn / floor, ${backend}, ${count} worker(s)`,
      ];
      await sink.part(names, async () => {
        await scaleTo(workers, count, floorBase, `floor-${backend}`);
        log(
          `floor on ${backend}, ${count} worker process(es): ${plan.rounds} x ${plan.runs} jobs of ${commits} commits`,
        );
        const { rates, cpu } = await floorRounds(
          floorTarget,
          pool,
          poller,
          plan,
          commits,
          count,
          roles(),
        );
        sink.notes.push(
          cpuLine(`floor, ${backend}, ${count} worker(s)`, cpu, 1000 / median(rates)),
        );
        sink.figures.push(rateFigure(names[0]!, rates, 'jobs/s'));
        const mine = cairn.get(count);
        if (!mine) throw new Error('no cairn figure to compare with');
        sink.figures.push(
          ratioFigure(
            ID,
            names[1]!,
            mine,
            rates,
            count === 1 ? { goal: { op: '>=', bound: 0.6 } } : {},
          ),
        );
        const mineCpu = cpuTotal(cairnCpu.get(count) ?? {});
        const floorCpu = cpuTotal(cpu);
        if (mineCpu > 0 && floorCpu > 0) {
          sink.figures.push(
            valueFigure(
              ID,
              names[2]!,
              mineCpu / floorCpu,
              'x',
              1,
              `cairn ${fmt(mineCpu * 1000)} ms, floor ${fmt(floorCpu * 1000)} ms per item (workers, Postgres, ${backend === 'redis' ? 'Redis, ' : ''}producer; /proc, first round)`,
              {
                basis: `${fmt(mineCpu * 1000)} / ${fmt(floorCpu * 1000)} ms`,
                ...(count === 1 && { goal: { op: '<=', bound: 3 } as const }),
              },
            ),
          );
        }
      });
    }
  } finally {
    await stopAll(workers);
    await client.close();
    await pool.end();
    await poller.end();
  }
}

/** Section 5a (issue item 4): runs/s producer -> BullMQ -> worker processes -> Postgres, beside the raw BullMQ + Postgres floor. */
export const throughputSection: Section = {
  id: ID,
  title: 'Throughput',
  cairn: true,
  async run(context) {
    const sink = new FigureSink(ID, context.log);
    const hasRedis = (await context.services.redisUrl()) !== undefined;
    const backends: ('redis' | 'postgres')[] = hasRedis ? ['redis', 'postgres'] : ['postgres'];
    if (!hasRedis)
      sink.notes.push('no redis-server binary and no REDIS_URL: Redis backend not run');
    const plan: Plan = {
      runs: context.quick ? 60 : 300,
      rounds: context.quick ? 1 : 3,
      workerCounts: { redis: WORKER_COUNTS, postgres: WORKER_COUNTS },
    };
    const calibration: { commits?: number } = {};
    for (const backend of backends) {
      if (plan.workerCounts[backend].length > 0)
        await measureBackend(context, sink, backend, plan, calibration);
    }
    const censusRuns = context.quick ? 20 : 100;
    const censusOf = async (name: string, budget?: BudgetOption) => {
      const database = await context.services.database(`${ID}_${name}`);
      return statementCensus(
        {
          databaseUrl: database.url,
          backend: backends[0]!,
          redisUrl: await context.services.redisUrl(),
          queueName: `bench-${name}-${Date.now()}`,
        },
        censusRuns,
        budget,
      );
    };
    let plainPerRun: number | undefined;
    await sink.part(['statements per run (worker side)'], async () => {
      const census = await censusOf('census');
      plainPerRun = census.perRun;
      const kinds = Object.entries(census.byKind)
        .sort((a, b) => b[1] - a[1])
        .map(([k, n]) => `${k} ${fmt(n)}`);
      sink.figures.push(
        valueFigure(
          ID,
          'statements per run (worker side)',
          census.perRun,
          'statements',
          context.quick ? 20 : 100,
          'mean over the runs',
          { goal: { op: '<=', bound: 6 } },
        ),
      );
      sink.notes.push(`worker-side statements per run (each one round trip): ${kinds.join(', ')}`);
    });
    await sink.part(['statements per run with a budget (worker side)'], async () => {
      // A budget no run reaches: its check before each model request is in memory, no round trip.
      const census = await censusOf('census_budget', {
        maxTokens: 1_000_000_000,
        maxCostUsd: 1_000,
      });
      sink.figures.push(
        valueFigure(
          ID,
          'statements per run with a budget (worker side)',
          census.perRun,
          'statements',
          censusRuns,
          'mean over the runs; goal: as many as the same runs without a budget',
          plainPerRun === undefined ? {} : { goal: { op: '<=', bound: plainPerRun } },
        ),
      );
    });
    sink.notes.push(
      `each Cairn run: scripted agent, 3 tool batches of 3 no-op calls, worker settings WORKER_CONCURRENCY=10, ${executionMode()}; the floor: the same BullMQ wiring and job options, each job doing ${calibration.commits ?? '?'} autocommitted INSERTs (Cairn's write transactions per run on Redis); the bench's own wait for the end (a poll every 25 ms, for Cairn and the floor alike) runs on one connection whose backend is left out of Postgres's CPU`,
    );
    return { figures: sink.figures, notes: sink.notes, failed: sink.failed };
  },
};
