import { setTimeout as delay } from 'node:timers/promises';
import { LIVE_STATUSES } from '@cairn/engine';
import { Redis } from 'ioredis';
import { retrying, statusCounts, TOP_LEVEL_RUNS } from './chaos-db.js';
import { CheckpointSampler } from './checkpoint-sampler.js';
import { submitRuns, type Submission } from './run-submitter.js';
import { drain, type ScenarioContext } from './scenario-context.js';

/** The Redis-flush scenario's name (its runs' `chaos_scenario`). */
export const FLUSH_SCENARIO = 'redis-flush';

/** What the Redis-flush scenario did, for the checks. */
export interface FlushScenarioRecord {
  scenario: string;
  startedAt: number;
  durationMs: number;
  /** When FLUSHALL was sent (ms since the epoch). */
  flushAt: number;
  /** Top-level runs not finished when Redis was flushed, by status. */
  unfinishedAtFlush: { run_id: string; status: string }[];
  submissions: Submission[];
  sampler: CheckpointSampler;
  drained: boolean;
}

/**
 * Enqueues `runs` runs and, as soon as every one is accepted and one has finished, wipes Redis with
 * FLUSHALL: every job is gone, and the workers' reconciler must re-enqueue
 * each unfinished run from Postgres.
 */
export async function runFlushScenario(
  ctx: ScenarioContext,
  options: { runs: number; drainMs: number },
): Promise<FlushScenarioRecord> {
  const startedAt = Date.now();
  const sampler = new CheckpointSampler(ctx.db);
  sampler.start(1_000);
  const submissions = await submitRuns({
    ...ctx.api,
    scenario: FLUSH_SCENARIO,
    count: options.runs,
    spreadMs: 1_000,
  });
  const waitUntil = Date.now() + 120_000;
  while (
    ((await retrying(() => statusCounts(ctx.db, FLUSH_SCENARIO))).COMPLETED ?? 0) === 0 &&
    Date.now() < waitUntil
  ) {
    await delay(50);
  }
  const { rows: unfinishedAtFlush } = await ctx.db.query<{ run_id: string; status: string }>(
    `select run_id, status from runs where run_id in (${TOP_LEVEL_RUNS}) and status = any($2)`,
    [FLUSH_SCENARIO, LIVE_STATUSES],
  );
  const redis = new Redis(ctx.services.redis.url, { maxRetriesPerRequest: 3 });
  const flushAt = Date.now();
  await redis.flushall();
  await redis.quit();
  const byStatus = unfinishedAtFlush.reduce<Record<string, number>>(
    (acc, r) => ({ ...acc, [r.status]: (acc[r.status] ?? 0) + 1 }),
    {},
  );
  ctx.log(
    `  FLUSHALL with ${unfinishedAtFlush.length} runs unfinished ${JSON.stringify(byStatus)}`,
  );
  const drained = await drain(
    ctx,
    FLUSH_SCENARIO,
    submissions.filter((s) => s.runId).length,
    options.drainMs,
  );
  await sampler.stop();
  return {
    scenario: FLUSH_SCENARIO,
    startedAt,
    durationMs: Date.now() - startedAt,
    flushAt,
    unfinishedAtFlush,
    submissions,
    sampler,
    drained,
  };
}
