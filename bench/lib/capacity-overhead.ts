import { sql, type Kysely } from 'kysely';
import type { CapacityLimit, ModelCapacity, PermitRequest } from '@cairn/engine';
import { createRedisConnection, RedisModelCapacity } from '@cairn/runtime';
import { createDb, migrate, PostgresModelCapacity, type Database } from '@cairn/store';
import { msSince } from './timing.js';

/** A limit with capacity to spare: every limit kind configured, none near binding. */
const SPARE_LIMIT: CapacityLimit = {
  concurrency: 1_000,
  requestsPerMinute: 100_000_000,
  tokensPerMinute: 1_000_000_000_000,
};
/** Permits per model name: a model's window then holds at most this many grants, as a 500-rpm model's does at half use. */
const PER_MODEL = 250;

/** Round trips timed alternately in one process: a permit (tryAcquire then release), and the baseline (two bare round trips). */
export interface PermitOverhead {
  /** ms per tryAcquire + release (two round trips). */
  permit: number[];
  /** ms per two bare round trips (`PING`, or `select 1`) on the same connection. */
  baseline: number[];
  /** ms of the tryAcquire and of the release alone. */
  acquire: number[];
  release: number[];
}

function request(model: string, round: number): PermitRequest {
  return {
    model,
    limit: SPARE_LIMIT,
    waiterId: `bench-run-${round}`,
    tenant: 'acme',
    weight: 1,
    priority: 5,
    waitedMs: 0,
    tokens: 1_200,
  };
}

/** Times `rounds` permits on `capacity`, alternated with `baseline`, after `warmup` untimed rounds of each. */
async function alternate(
  capacity: ModelCapacity,
  baseline: () => Promise<unknown>,
  rounds: number,
  warmup: number,
  label: string,
): Promise<PermitOverhead> {
  const out: PermitOverhead = { permit: [], baseline: [], acquire: [], release: [] };
  let model = '';
  for (let round = -warmup; round < rounds; round++) {
    const index = round + warmup;
    if (index % PER_MODEL === 0) {
      // A fresh model every PER_MODEL permits, its first permit untimed (it creates the model's state).
      model = `openai-chat:bench-${label}-${index}`;
      const first = await capacity.tryAcquire(request(model, round));
      if (first.granted) await capacity.release(first.permit, { ok: true, usedTokens: 900 });
    }
    const start = process.hrtime.bigint();
    const answer = await capacity.tryAcquire(request(model, round));
    if (!answer.granted) throw new Error(`permit refused with capacity to spare: ${answer.reason}`);
    const acquireMs = msSince(start);
    await capacity.release(answer.permit, { ok: true, usedTokens: 900 });
    const permitMs = msSince(start);
    const base = process.hrtime.bigint();
    await baseline();
    await baseline();
    const baselineMs = msSince(base);
    if (round >= 0) {
      out.permit.push(permitMs);
      out.baseline.push(baselineMs);
      out.acquire.push(acquireMs);
      out.release.push(permitMs - acquireMs);
    }
  }
  return out;
}

/** Permit overhead on the Redis limiter (`RedisModelCapacity`), against `PING` on the same connection. */
export async function redisPermitOverhead(
  redisUrl: string,
  rounds: number,
  warmup: number,
): Promise<PermitOverhead> {
  const redis = createRedisConnection({ url: redisUrl });
  try {
    const capacity = new RedisModelCapacity(redis, { prefix: `bench-cap-${Date.now()}` });
    return await alternate(capacity, () => redis.ping(), rounds, warmup, 'redis');
  } finally {
    await redis.quit().catch(() => redis.disconnect());
  }
}

/** Permit overhead on the Postgres limiter (`PostgresModelCapacity`, migrated database), against `select 1` on the same pool. */
export async function postgresPermitOverhead(
  databaseUrl: string,
  rounds: number,
  warmup: number,
): Promise<PermitOverhead> {
  const db: Kysely<Database> = createDb(databaseUrl, { max: 1 });
  try {
    await migrate(db);
    const capacity = new PostgresModelCapacity(db);
    return await alternate(capacity, () => sql`select 1`.execute(db), rounds, warmup, 'postgres');
  } finally {
    await db.destroy();
  }
}
