import type pg from 'pg';
import { DEFAULT_JOB_OPTIONS, RunQueue } from '@cairn/queue';
import { runConcurrently } from './peer-harness.js';
import { PRODUCER_LANES, type QueueTarget } from './producer.js';
import { pollUntil } from './timing.js';

/** The floor worker's script. */
export const FLOOR_WORKER = 'bench/children/floor-worker.ts';

/** Creates the floor's bare table. */
export async function createFloorTable(pool: pg.Pool): Promise<void> {
  await pool.query(
    'CREATE TABLE IF NOT EXISTS floor_rows (job_id text NOT NULL, body jsonb NOT NULL)',
  );
}

/** Opens the floor's producer queue on `target`. */
export function openFloorQueue(target: QueueTarget): Promise<RunQueue> {
  return RunQueue.open({
    backend: target.backend,
    redisUrl: target.redisUrl,
    databaseUrl: target.databaseUrl,
    queueName: target.queueName,
  });
}

/** Adds `count` no-op jobs over the producer's concurrent lanes (as Cairn's runs are added), with Cairn's job options. */
export async function enqueueFloorJobs(
  queue: RunQueue,
  count: number,
  round: number,
): Promise<void> {
  await runConcurrently(count, PRODUCER_LANES, async (i) => {
    await queue.queue.add('floor', { i }, { ...DEFAULT_JOB_OPTIONS, jobId: `floor-${round}-${i}` });
  });
}

/** Resolves once the floor table holds `rows` rows. */
export async function waitForFloorRows(
  pool: pg.Pool,
  rows: number,
  timeoutMs: number,
): Promise<void> {
  await pollUntil(
    `${rows} floor rows`,
    async () => {
      const { rows: r } = await pool.query<{ n: string }>('SELECT count(*) AS n FROM floor_rows');
      return Number(r[0]?.n) >= rows ? true : undefined;
    },
    { timeoutMs, everyMs: 25 },
  );
}
