import { readFile } from 'node:fs/promises';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { IDLE_STATUSES } from '@cairn/engine';
import {
  startFakeOpenAIServer,
  type FakeModelQuota,
  type FakeOpenAIServer,
} from '@cairn/engine/testing';
import { ProducerService } from '@cairn/producer';
import { createRedisConnection, RedisModelCapacity } from '@cairn/runtime';
import { createDb, PostgresModelCapacity } from '@cairn/store';
import { capacityAgent, capacityScript, createRegistry } from './capacity-registry.js';
import { startCpuAccounting, type CpuRoles } from './cpu-usage.js';
import { startWorker, stopAll, type WorkerHandle } from './fleet.js';
import { runConcurrently } from './peer-harness.js';
import { PRODUCER_LANES, type QueueTarget } from './producer.js';
import { pollUntil, sleep } from './timing.js';

/** The registry module the capacity benchmark's workers load. */
const CAPACITY_REGISTRY = fileURLToPath(new URL('./capacity-registry.ts', import.meta.url));

/** What a capacity fleet is made of. */
export interface CapacityFleetOptions {
  target: QueueTarget;
  workers: number;
  /** `WORKER_CONCURRENCY` of each worker. */
  concurrency: number;
  /** Model ids on the fake server (each gets an agent). */
  models: readonly string[];
  /** The fake server's quota per model id (a model not listed is unlimited). */
  quota: Record<string, FakeModelQuota>;
  /** How long the fake server takes to answer each request. */
  latencyMs: number;
  /** The workers' `CAIRN_MODEL_LIMITS`, keyed by model id (as `openai-chat:<id>`). */
  limits: Record<string, FakeModelQuota>;
}

/** A fleet of worker processes, the fake OpenAI server they call, and a producer on their queue. */
export interface CapacityFleet {
  server: FakeOpenAIServer;
  client: ProducerService;
  /** A pool on the store's database, for reading runs. */
  pool: pg.Pool;
  workers: WorkerHandle[];
  close(): Promise<void>;
}

/** `CAIRN_MODEL_LIMITS` for `limits`, in the documented JSON shape. */
function modelLimitsJson(limits: Record<string, FakeModelQuota>): string {
  return JSON.stringify(
    Object.entries(limits).map(([model, limit]) => ({
      model: `openai-chat:${model}`,
      concurrency: limit.concurrency,
      requests_per_minute: limit.requestsPerMinute,
      tokens_per_minute: limit.tokensPerMinute,
    })),
  );
}

/** Starts the fake server, `options.workers` worker processes on its models, and a producer; resolves once every worker is ready. */
export async function startCapacityFleet(options: CapacityFleetOptions): Promise<CapacityFleet> {
  const server = await startFakeOpenAIServer({
    streaming: 'never',
    decide: capacityScript,
    quota: { perModel: options.quota },
    latencyMs: options.latencyMs,
  });
  const workers: WorkerHandle[] = [];
  const pool = new pg.Pool({ connectionString: options.target.databaseUrl, max: 4 });
  let client: ProducerService | undefined;
  const close = async () => {
    await stopAll(workers);
    await client?.close();
    await pool.end();
    await server.close();
  };
  try {
    const registry = createRegistry({ baseUrl: server.url, models: options.models });
    client = await ProducerService.connect({
      databaseUrl: options.target.databaseUrl,
      queue: {
        backend: options.target.backend,
        redisUrl: options.target.redisUrl,
        queueName: options.target.queueName,
      },
      registry,
      migrate: true,
    });
    for (let i = 1; i <= options.workers; i++) {
      workers.push(
        startWorker({
          ...options.target,
          workerId: `cap-${i}`,
          concurrency: options.concurrency,
          registry: CAPACITY_REGISTRY,
          env: {
            BENCH_OPENAI_URL: server.url,
            BENCH_CAP_MODELS: options.models.join(','),
            CAIRN_MODEL_LIMITS: modelLimitsJson(options.limits),
          },
        }),
      );
    }
    await Promise.all(workers.map((w) => w.ready));
    return { server, client, pool, workers, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/** Creates one run of the agent on `model` for `tenant`; returns its id. */
export async function submitRun(
  client: ProducerService,
  model: string,
  tenant: string,
): Promise<string> {
  const run = await client.enqueueRun({
    entity: { kind: 'agent', name: capacityAgent(model) },
    input: `capacity benchmark (${tenant})`,
    tenantId: tenant,
  });
  return run.runId;
}

/** Creates `count` runs over the producer's concurrent lanes (a tenant's flood). */
export async function submitRuns(
  client: ProducerService,
  count: number,
  model: string,
  tenant: string,
): Promise<string[]> {
  const ids: string[] = [];
  await runConcurrently(count, PRODUCER_LANES, async () => {
    ids.push(await submitRun(client, model, tenant));
  });
  return ids;
}

/**
 * Submits one run every `everyMs` (on a fixed schedule, not after the
 * previous one) while `more()` holds; resolves with their ids.
 */
export async function submitEvery(
  client: ProducerService,
  everyMs: number,
  model: string,
  tenant: string,
  more: () => boolean,
): Promise<string[]> {
  const ids: string[] = [];
  const start = Date.now();
  for (let i = 0; more(); i++) {
    ids.push(await submitRun(client, model, tenant));
    await sleep(Math.max(0, start + (i + 1) * everyMs - Date.now()));
  }
  return ids;
}

/** How a run ended, as the store has it. */
export interface RunOutcome {
  runId: string;
  status: string;
  /** From its creation to its last write (its end, once terminal), on the database's clock. */
  ms: number;
  error: string | null;
}

/** The outcome of each run in `runIds`. */
export async function readOutcomes(
  pool: pg.Pool,
  runIds: readonly string[],
): Promise<RunOutcome[]> {
  const { rows } = await pool.query<{
    run_id: string;
    status: string;
    ms: string;
    error: unknown;
  }>(
    `SELECT run_id, status, error,
            extract(epoch FROM updated_at - created_at) * 1000 AS ms
       FROM runs WHERE run_id = ANY($1)`,
    [runIds],
  );
  return rows.map((r) => ({
    runId: r.run_id,
    status: r.status,
    ms: Number(r.ms),
    error: r.error === null ? null : JSON.stringify(r.error).slice(0, 300),
  }));
}

/** Resolves once every run in `runIds` is terminal; throws after `timeoutMs`. */
export async function waitAllTerminal(
  pool: pg.Pool,
  runIds: readonly string[],
  timeoutMs: number,
): Promise<void> {
  await pollUntil(
    `${runIds.length} runs to end`,
    async () => ((await unfinished(pool, runIds)).length === 0 ? true : undefined),
    { timeoutMs, everyMs: 200 },
  );
}

/** The runs of `runIds` not terminal yet. */
async function unfinished(pool: pg.Pool, runIds: readonly string[]): Promise<string[]> {
  const { rows } = await pool.query<{ run_id: string }>(
    'SELECT run_id FROM runs WHERE run_id = ANY($1) AND NOT (status = ANY($2))',
    [runIds, IDLE_STATUSES],
  );
  return rows.map((r) => r.run_id);
}

/** Cancels the runs of `runIds` still going (a flood's leftover backlog) and waits for them to end; returns how many it cancelled. */
export async function cancelLeftovers(
  fleet: CapacityFleet,
  runIds: readonly string[],
): Promise<number> {
  const left = await unfinished(fleet.pool, runIds);
  await runConcurrently(left.length, 8, async (i) => {
    await fleet.client.cancelRun(left[i]!).catch(() => undefined); // ended meanwhile
  });
  await waitAllTerminal(fleet.pool, runIds, 60_000);
  return left.length;
}

/** Model pickups after a park (attempts with reason `capacity`) among `runIds`. */
export async function capacityPickups(pool: pg.Pool, runIds: readonly string[]): Promise<number> {
  const { rows } = await pool.query<{ n: string }>(
    "SELECT count(*) AS n FROM run_attempts WHERE run_id = ANY($1) AND reason = 'capacity'",
    [runIds],
  );
  return Number(rows[0]?.n);
}

/**
 * What share of `rpm` each 60 s window inside [from, to] held, sliding by
 * `stepMs`: accepted receipts in [start, start + 60 s) / rpm. Empty when the
 * period is shorter than a window.
 */
export function windowShares(
  acceptedAt: readonly number[],
  from: number,
  to: number,
  rpm: number,
  stepMs = 1_000,
): number[] {
  const shares: number[] = [];
  for (let start = from; start + 60_000 <= to; start += stepMs) {
    const held = acceptedAt.filter((t) => t >= start && t < start + 60_000).length;
    shares.push(held / rpm);
  }
  return shares;
}

/** A model's ledger on the fake server at one moment. */
export interface LedgerMark {
  at: number;
  accepted: number;
  rejected: number;
}

/** Reads `model`'s ledger now. */
export function markLedger(server: FakeOpenAIServer, model: string): LedgerMark {
  return {
    at: Date.now(),
    accepted: server.quota.accepted(model),
    rejected: server.quota.rejected(model),
  };
}

/** Each park (a `CapacityWait` event of a parked run) among `runIds`: how long its job was delayed (until the pickup the limiter expected room for), in ms. */
export async function parkDelays(pool: pg.Pool, runIds: readonly string[]): Promise<number[]> {
  const { rows } = await pool.query<{ ms: string }>(
    `SELECT extract(epoch FROM (data->>'until')::timestamptz - created_at) * 1000 AS ms
       FROM run_events WHERE run_id = ANY($1) AND type = 'CapacityWait'`,
    [runIds],
  );
  return rows.map((r) => Number(r.ms));
}

/** Each run's wait in the queue: from its creation to its first attempt's start, in ms. */
export async function queueWaits(pool: pg.Pool, runIds: readonly string[]): Promise<number[]> {
  const { rows } = await pool.query<{ ms: string }>(
    `SELECT extract(epoch FROM min(a.started_at) - r.created_at) * 1000 AS ms
       FROM runs r JOIN run_attempts a USING (run_id)
      WHERE r.run_id = ANY($1) GROUP BY r.run_id, r.created_at`,
    [runIds],
  );
  return rows.map((r) => Number(r.ms));
}

/** Where a run's completion time went: its wait in the queue, its permits' waits, its parks, and the rest. */
export interface RunTimeSplit {
  /** Creation to the end, ms (as {@link readOutcomes} counts it). */
  totalMs: number;
  /** Creation to its first attempt's start. */
  queueMs: number;
  /** The permits' waits its model requests reported (`capacityWaitMs`, parks included). */
  permitMs: number;
  parks: number;
  /** Its attempts. */
  attempts: number;
}

/** {@link RunTimeSplit} of each completed run in `runIds` that took longer than `overMs`, slowest first. */
export async function slowRunSplits(
  pool: pg.Pool,
  runIds: readonly string[],
  overMs: number,
): Promise<RunTimeSplit[]> {
  const { rows } = await pool.query<Record<keyof RunTimeSplit, string>>(
    `SELECT extract(epoch FROM r.updated_at - r.created_at) * 1000 AS "totalMs",
            (SELECT extract(epoch FROM min(a.started_at) - r.created_at) * 1000
               FROM run_attempts a WHERE a.run_id = r.run_id) AS "queueMs",
            (SELECT coalesce(sum((e.data->>'capacityWaitMs')::numeric), 0)
               FROM run_events e WHERE e.run_id = r.run_id AND e.type = 'ModelRequestCompleted') AS "permitMs",
            (SELECT count(*) FROM run_events e WHERE e.run_id = r.run_id AND e.type = 'CapacityWait') AS parks,
            (SELECT count(*) FROM run_attempts a WHERE a.run_id = r.run_id) AS attempts
       FROM runs r
      WHERE r.run_id = ANY($1) AND r.status = 'COMPLETED'
        AND r.updated_at - r.created_at > $2 * interval '1 millisecond'
      ORDER BY r.updated_at - r.created_at DESC`,
    [runIds, overMs],
  );
  return rows.map((r) => ({
    totalMs: Number(r.totalMs),
    queueMs: Number(r.queueMs),
    permitMs: Number(r.permitMs),
    parks: Number(r.parks),
    attempts: Number(r.attempts),
  }));
}

/** What the fleet's limiter showed of one model, sampled while it ran. */
export interface LimiterSamples {
  /** Requests holding a slot. */
  inFlight: number[];
  /** Runs in line (asked within the waiter TTL). */
  waiting: number[];
  /**
   * Grant times (ms) of the model's permits, read from the Redis limiter's
   * window (the limiter's own key layout, read only here to time grants
   * against the server's receipts); empty on Postgres.
   */
  grants: number[];
}

/**
 * Reads the fleet's limiter (where its workers keep it: the queue's Redis
 * under BullMQ's default prefix, or the store's Postgres) every `everyMs`
 * for `model`'s snapshot, until stopped.
 */
export function sampleLimiter(
  target: QueueTarget,
  model: string,
  everyMs: number,
): { stop(): Promise<LimiterSamples> } {
  const redis =
    target.backend === 'redis' && target.redisUrl
      ? createRedisConnection({ url: target.redisUrl })
      : undefined;
  const db = redis ? undefined : createDb(target.databaseUrl, { max: 1 });
  const limiter = redis
    ? new RedisModelCapacity(redis, { prefix: `bull:${target.queueName}` })
    : new PostgresModelCapacity(db!);
  const samples: LimiterSamples = { inFlight: [], waiting: [], grants: [] };
  const grants = new Map<string, number>();
  const windowKey = `bull:${target.queueName}:cap:openai-chat:${model}:window`;
  let running = true;
  const loop = (async () => {
    while (running) {
      const snapshot = (await limiter.snapshot()).find((s) => s.model === `openai-chat:${model}`);
      if (snapshot) {
        samples.inFlight.push(snapshot.inFlight);
        samples.waiting.push(snapshot.waiting);
      }
      const window = redis ? await redis.zrange(windowKey, 0, -1, 'WITHSCORES') : [];
      for (let i = 0; i + 1 < window.length; i += 2) grants.set(window[i]!, Number(window[i + 1]));
      await sleep(everyMs);
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop.catch(() => undefined);
      await redis?.quit().catch(() => redis.disconnect());
      await db?.destroy();
      samples.grants = [...grants.values()].sort((a, b) => a - b);
      return samples;
    },
  };
}

/** How far the runs of `runIds` got: ended COMPLETED, past their first checkpoint but not ended, or not past it. */
export async function runProgress(
  pool: pg.Pool,
  runIds: readonly string[],
): Promise<{ completed: number; midway: number; notStarted: number }> {
  const { rows } = await pool.query<{ completed: string; midway: string; total: string }>(
    `SELECT count(*) FILTER (WHERE status = 'COMPLETED') AS completed,
            count(*) FILTER (WHERE status <> 'COMPLETED' AND last_checkpoint_at_message_index > 0) AS midway,
            count(*) AS total
       FROM runs WHERE run_id = ANY($1)`,
    [runIds],
  );
  const row = rows[0]!;
  const completed = Number(row.completed);
  const midway = Number(row.midway);
  return { completed, midway, notStarted: Number(row.total) - completed - midway };
}

/** Worker-slot time (ms) spent by the attempts of `runIds` within [fromMs, toMs]: all of it, and the attempts that ended parked. */
export async function attemptTime(
  pool: pg.Pool,
  runIds: readonly string[],
  fromMs: number,
  toMs: number,
): Promise<{
  allMs: number;
  parkedMs: number;
  /** Of the attempts that ended parked: those that were a run's first pickup (reason `run`), and their time. */
  parkedFirst: { count: number; ms: number };
  /** Of the attempts that ended parked: those that came back from a park (reason `capacity`), and their time. */
  parkedAgain: { count: number; ms: number };
}> {
  const { rows } = await pool.query<Record<string, string | null>>(
    `WITH spans AS (
       SELECT outcome, reason,
              extract(epoch FROM least(coalesce(ended_at, to_timestamp($3 / 1000.0)), to_timestamp($3 / 1000.0))
                               - greatest(started_at, to_timestamp($2 / 1000.0))) * 1000 AS ms
         FROM run_attempts
        WHERE run_id = ANY($1) AND started_at < to_timestamp($3 / 1000.0)
          AND coalesce(ended_at, now()) > to_timestamp($2 / 1000.0))
     SELECT sum(ms) AS all_ms, sum(ms) FILTER (WHERE outcome = 'parked') AS parked_ms,
            count(*) FILTER (WHERE outcome = 'parked' AND reason = 'run') AS first_n,
            sum(ms) FILTER (WHERE outcome = 'parked' AND reason = 'run') AS first_ms,
            count(*) FILTER (WHERE outcome = 'parked' AND reason = 'capacity') AS again_n,
            sum(ms) FILTER (WHERE outcome = 'parked' AND reason = 'capacity') AS again_ms
       FROM spans`,
    [runIds, fromMs, toMs],
  );
  const n = (key: string) => Number(rows[0]?.[key] ?? 0);
  return {
    allMs: n('all_ms'),
    parkedMs: n('parked_ms'),
    parkedFirst: { count: n('first_n'), ms: n('first_ms') },
    parkedAgain: { count: n('again_n'), ms: n('again_ms') },
  };
}

/** The whole machine's CPU ticks from /proc/stat: busy (everything but idle and iowait) and total. */
async function machineTicks(): Promise<{ busy: number; total: number }> {
  const line = (await readFile('/proc/stat', 'utf8').catch(() => '')).split('\n')[0] ?? '';
  const ticks = line.split(/\s+/).slice(1, 9).map(Number);
  const total = ticks.reduce((a, b) => a + b, 0);
  return { busy: total - (ticks[3] ?? 0) - (ticks[4] ?? 0), total };
}

/** Cores used on average by each role of `roles`, and by the whole machine (`machine`), between start and `stop()`. */
export async function startCoreAccounting(
  roles: CpuRoles,
): Promise<{ stop(): Promise<Record<string, number>> }> {
  const started = Date.now();
  const machine = await machineTicks();
  const accounting = await startCpuAccounting(roles);
  return {
    stop: async () => {
      const seconds = (Date.now() - started) / 1000;
      const used = await accounting.stop();
      const after = await machineTicks();
      const share = (after.busy - machine.busy) / Math.max(1, after.total - machine.total);
      return {
        ...Object.fromEntries(Object.entries(used).map(([k, v]) => [k, v / seconds])),
        machine: share * cpus().length,
      };
    },
  };
}

/** A 429 the fake server sent, seen from its ledger: when, and how many accepted requests its 60 s window held then. */
export interface SeenRejection {
  at: number;
  windowHeld: number;
}

/** Watches `model`'s 429s on the fake server (polling its ledger every `everyMs`) until stopped. */
export function watchRejections(
  server: FakeOpenAIServer,
  model: string,
  everyMs = 10,
): { stop(): SeenRejection[] } {
  const seen: SeenRejection[] = [];
  let rejected = server.quota.rejected(model);
  const timer = setInterval(() => {
    const now = server.quota.rejected(model);
    if (now === rejected) return;
    const at = Date.now();
    const windowHeld = server.quota.acceptedAt(model).filter((t) => t > at - 60_000).length;
    for (; rejected < now; rejected++) seen.push({ at, windowHeld });
  }, everyMs);
  return {
    stop: () => {
      clearInterval(timer);
      return seen;
    },
  };
}
