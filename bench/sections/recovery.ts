import pg from 'pg';
import type { ProducerService } from '@cairn/producer';
import { DEFAULT_LOCK_MS, DEFAULT_STALLED_INTERVAL_MS } from '@cairn/runtime';
import { FigureSink } from '../lib/attempt.js';
import { BLOCKER_AGENT } from '../lib/bench-registry.js';
import { medianFigure, valueFigure, type Goal } from '../lib/figure.js';
import { executionMode, startWorker, stopAll, type WorkerHandle } from '../lib/fleet.js';
import { enqueueRuns, openClient, waitForTerminal, type QueueTarget } from '../lib/producer.js';
import { readRunState, type RunState } from '../lib/run-watch.js';
import type { Section, SectionContext } from '../lib/section.js';
import { summarize } from '../lib/stats.js';
import { pollUntil } from '../lib/timing.js';

const ID = 'recovery';
/** Tools sleep a little and runs have 4 batches, so that a run killed after its first checkpoint still has batches to go. */
const BLOCK_MS = 30_000;
const WORKLOAD_ENV = { BENCH_TOOL_MS: '100', BENCH_BATCHES: '4', BENCH_BLOCK_MS: String(BLOCK_MS) };
const POLL_MS = 5;

interface Fleet {
  target: QueueTarget;
  workers: Map<string, WorkerHandle>;
  /** Workers that logged they started. */
  ready: Set<string>;
  spawned: number;
  /** Wait for a killed worker's replacement before the next trial (else only keep two workers ready). */
  waitForReplacement: boolean;
  /** The workers' `CAIRN_DEATH_SIGNAL`: a dead worker's runs released as soon as its liveness connection is gone. */
  deathSignal: boolean;
}

/** How a killed worker's runs are found: by its closed liveness connection, or by its locks expiring (`CAIRN_DEATH_SIGNAL=0`). */
type Signal = 'death signal' | 'lock expiry';

function spawn(fleet: Fleet): WorkerHandle {
  const worker = startWorker({
    ...fleet.target,
    workerId: `rec-${fleet.target.backend}-${++fleet.spawned}`,
    env: { ...WORKLOAD_ENV, CAIRN_DEATH_SIGNAL: fleet.deathSignal ? '1' : '0' },
  });
  fleet.workers.set(worker.workerId, worker);
  void worker.ready.then(
    () => fleet.ready.add(worker.workerId),
    () => undefined,
  );
  return worker;
}

/** Resolves once at least `count` workers are ready: the holder to kill and another to take over. */
async function readyWorkers(fleet: Fleet, count: number): Promise<void> {
  while ([...fleet.workers.keys()].filter((id) => fleet.ready.has(id)).length < count) {
    const pending = [...fleet.workers.values()]
      .filter((w) => !fleet.ready.has(w.workerId))
      .map((w) => w.ready);
    if (pending.length === 0) throw new Error(`fewer than ${count} workers alive`);
    await Promise.race(pending);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** One trial: SIGKILL the worker holding a run right after its first checkpoint; ms until the next claim and the next checkpoint. */
async function killTrial(
  fleet: Fleet,
  client: ProducerService,
  pool: pg.Pool,
): Promise<{ claimMs: number; nextMs: number }> {
  await readyWorkers(fleet, 2);
  const [run] = await enqueueRuns(client, 1);
  const runId = run!.runId;
  const first = await pollUntil<RunState>(
    'the first checkpoint',
    async () => {
      const state = await readRunState(pool, runId);
      return state && state.idx > 0 ? state : undefined;
    },
    { timeoutMs: 30_000, everyMs: POLL_MS },
  );
  const holder = first.workerId ? fleet.workers.get(first.workerId) : undefined;
  if (!holder) throw new Error(`no known worker holds run ${runId} (attempt by ${first.workerId})`);
  const killedAt = Date.now();
  await holder.kill();
  fleet.workers.delete(holder.workerId);
  const replacement = spawn(fleet);
  const claimed = await pollUntil<RunState>(
    'another worker to claim the run',
    async () => {
      const state = await readRunState(pool, runId);
      return state && state.epoch > first.epoch && state.startedMs !== null ? state : undefined;
    },
    { timeoutMs: 60_000, everyMs: POLL_MS },
  );
  const next = await pollUntil<RunState>(
    'the next checkpoint',
    async () => {
      const state = await readRunState(pool, runId);
      return state && state.idx > first.idx ? state : undefined;
    },
    { timeoutMs: 60_000, everyMs: POLL_MS },
  );
  await waitForTerminal(pool, [runId], 60_000);
  if (fleet.waitForReplacement) await replacement.ready;
  return { claimMs: claimed.startedMs! - killedAt, nextMs: next.committedMs - killedAt };
}

/** Runs `count` blocker runs one at a time; returns how many were claimed more than once while their worker was alive. */
async function blockTrials(client: ProducerService, pool: pg.Pool, count: number): Promise<number> {
  let takeovers = 0;
  for (let i = 0; i < count; i++) {
    const [run] = await enqueueRuns(client, 1, BLOCKER_AGENT);
    await waitForTerminal(pool, [run!.runId], BLOCK_MS + 60_000);
    const state = await readRunState(pool, run!.runId);
    if (state && state.epoch > 1) takeovers++;
  }
  return takeovers;
}

async function measureBackend(
  context: SectionContext,
  sink: FigureSink,
  backend: 'redis' | 'postgres',
  signal: Signal,
  trials: number,
  blocks: number,
) {
  const deathSignal = signal === 'death signal';
  const database = await context.services.database(
    `${ID}_${backend}_${deathSignal ? 'signal' : 'expiry'}`,
  );
  const redisUrl = backend === 'redis' ? await context.services.redisUrl() : undefined;
  const fleet: Fleet = {
    target: { databaseUrl: database.url, backend, redisUrl, queueName: `bench-rec-${Date.now()}` },
    workers: new Map(),
    ready: new Set(),
    spawned: 0,
    waitForReplacement: !context.quick,
    deathSignal,
  };
  const pool = new pg.Pool({ connectionString: database.url, max: 3 });
  const client = await openClient(fleet.target);
  const names = [
    `claimed by another worker after SIGKILL, ${backend}, ${signal}`,
    `claimed after SIGKILL p95, ${backend}, ${signal}`,
    `next checkpoint after SIGKILL, ${backend}, ${signal}`,
    `next checkpoint after SIGKILL p95, ${backend}, ${signal}`,
  ];
  // The goals are the death signal's: lock expiry is its floor, measured beside it.
  const goal = (bound: Goal) => (deathSignal ? { goal: bound } : {});
  try {
    // --quick keeps a spare worker instead of waiting for each replacement to start
    const initial = Array.from({ length: context.quick ? 3 : 2 }, () => spawn(fleet));
    await Promise.all(initial.map((w) => w.ready));
    await sink.part(names, async () => {
      context.log(`${backend}, ${signal}: ${trials} SIGKILL trials (${executionMode()})`);
      const results = [];
      for (let t = 0; t < trials; t++) results.push(await killTrial(fleet, client, pool));
      const claim = results.map((r) => r.claimMs);
      const next = results.map((r) => r.nextMs);
      const p95 = (xs: number[]) => summarize(xs).p95;
      sink.figures.push(
        medianFigure(ID, names[0]!, claim, 'ms', goal({ op: '<=', bound: 500 })),
        valueFigure(
          ID,
          names[1]!,
          p95(claim),
          'ms',
          claim.length,
          `max ${Math.max(...claim).toFixed(0)}`,
          goal({ op: '<=', bound: 800 }),
        ),
        medianFigure(ID, names[2]!, next, 'ms'),
        valueFigure(
          ID,
          names[3]!,
          p95(next),
          'ms',
          next.length,
          `max ${Math.max(...next).toFixed(0)}`,
        ),
      );
    });
    // A busy live worker must not look dead: only the death signal could misfire there.
    if (!deathSignal) return;
    const blockName = `false takeovers, tool blocks its thread ${BLOCK_MS / 1000} s, ${backend}, ${signal}`;
    await sink.part([blockName], async () => {
      context.log(
        `${backend}: ${blocks} runs whose first tool call blocks its thread for ${BLOCK_MS / 1000} s`,
      );
      const takeovers = await blockTrials(client, pool, blocks);
      sink.figures.push(
        valueFigure(
          ID,
          blockName,
          takeovers,
          'runs',
          blocks,
          `${takeovers} of ${blocks} runs claimed twice`,
          { goal: { op: '<=', bound: 0 } },
        ),
      );
    });
  } finally {
    await stopAll([...fleet.workers.values()]);
    await client.close();
    await pool.end();
  }
}

/** Section 5b (issue item 3): recovery time after SIGKILL on both backends, and false takeovers under a blocked event loop. */
export const recoverySection: Section = {
  id: ID,
  title: 'Recovery time',
  cairn: true,
  async run(context) {
    const trials = context.quick ? 3 : 20;
    const blocks = context.quick ? 1 : 5;
    const sink = new FigureSink(ID, context.log);
    const hasRedis = (await context.services.redisUrl()) !== undefined;
    const all: ('redis' | 'postgres')[] = hasRedis ? ['redis', 'postgres'] : ['postgres'];
    // --quick measures one backend (Redis when there is one)
    const backends = context.quick ? all.slice(0, 1) : all;
    if (context.quick && hasRedis)
      sink.notes.push('--quick: the PostgreSQL backend is measured in full runs only');
    for (const backend of backends)
      for (const signal of ['death signal', 'lock expiry'] as const)
        await measureBackend(context, sink, backend, signal, trials, blocks);
    sink.notes.push(
      `two worker processes (three in --quick, so as not to wait for replacements), WORKER_CONCURRENCY=10, ${executionMode()} (defaults: lock ${DEFAULT_LOCK_MS} ms, stalled interval ${DEFAULT_STALLED_INTERVAL_MS} ms, 1 execution thread); one run at a time (4 batches, 100 ms tools); each backend with the death signal (the default: the goals, and the false-takeover trials) and with lock expiry alone (CAIRN_DEATH_SIGNAL=0); the holder is SIGKILLed within ~5 ms of its first checkpoint and replaced; claim = new attempt started_at - kill, next checkpoint = the time of the next commit's event batch - kill`,
    );
    return { figures: sink.figures, notes: sink.notes, failed: sink.failed };
  },
};
