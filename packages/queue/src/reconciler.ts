import { CONTINUE_IN_PLACE_STATUSES, LIVE_STATUSES } from '@cairn/engine';
import { ADVISORY_LOCKS, type PostgresCheckpointStore, type RunCursor } from '@cairn/store';
import { resumeJob } from './job-catalog.js';
import type { RunQueue } from './queue-backend.js';
import { SILENT_LOGGER, type WorkerLogger } from './worker-logger.js';

/** Default number of runs (or overdue actions) one reconcile pass looks at, of each kind (live, decided paused, overdue). */
export const DEFAULT_RECONCILE_BATCH = 100;

/** Options of {@link reconcileOnce} and {@link startReconciler}. */
export interface ReconcileOptions {
  store: PostgresCheckpointStore;
  runQueue: RunQueue;
  /** Only runs not updated for this long (a run just created may not have its job yet). @defaultValue 15000 */
  olderThanMs?: number;
  /** Runs (or overdue actions) looked at per pass, of each kind. @defaultValue {@link DEFAULT_RECONCILE_BATCH} */
  batchSize?: number;
  logger?: WorkerLogger;
}

/** What one pass did. */
export interface ReconcileResult {
  /** False when another worker was reconciling (this pass did nothing). */
  locked: boolean;
  /** Top-level PENDING or RUNNING runs (and decided PAUSED ones) looked at. */
  checked: number;
  /** Run ids a `continue` was enqueued for. */
  enqueued: string[];
  /** Overdue actions this pass expired (their `expire` job never ran). */
  expired: string[];
  /** Where the scan of live runs stopped: the next pass starts after it; undefined once it reached the end. */
  cursor?: RunCursor;
}

/**
 * Finds top-level runs left PENDING or RUNNING with no live job (Redis lost,
 * enqueue failed after the row was written) and enqueues a `continue` with
 * reason `reconciled`, and PAUSED ones with every action decided and no
 * resume job (their resume), and expires undecided actions past their
 * `expires_at` whose `expire` job never ran; idempotent, since a run has at
 * most one live job and an expiry decides an action once.
 * Bounded: one worker at a time (a Postgres advisory lock), at most
 * `batchSize` runs of each kind per pass, read through the partial index on
 * top-level runs by status; `after` continues the scan where the last pass stopped.
 */
export async function reconcileOnce(options: ReconcileOptions & { after?: RunCursor }): Promise<ReconcileResult> {
  const outcome = await options.store.withAdvisoryLock(ADVISORY_LOCKS.reconciler, () => reconcileBatch(options));
  return outcome.locked ? outcome.result : { locked: false, checked: 0, enqueued: [], expired: [] };
}

async function reconcileBatch(options: ReconcileOptions & { after?: RunCursor }): Promise<ReconcileResult> {
  const { store, runQueue } = options;
  const logger = options.logger ?? SILENT_LOGGER;
  const olderThanMs = options.olderThanMs ?? 15_000;
  const limit = options.batchSize ?? DEFAULT_RECONCILE_BATCH;
  const live = await store.listRunsByStatus(LIVE_STATUSES, olderThanMs, { topLevelOnly: true, limit, after: options.after });
  const runs = [
    ...live,
    // An ERROR run whose continue was stored but whose job never made it to the queue.
    ...(await store.listRunsWithWaitingContinue(
      CONTINUE_IN_PLACE_STATUSES.filter((s) => !LIVE_STATUSES.includes(s)),
      olderThanMs,
      limit,
    )),
  ];
  const enqueued: string[] = [];
  let checked = 0;
  for (const run of runs) {
    if (run.parentRunId !== null) continue;
    checked++;
    if (await runQueue.liveJobFor(run.runId)) continue;
    await runQueue.add({ name: 'continue', data: { runId: run.runId, reason: 'reconciled' } });
    enqueued.push(run.runId);
    logger.info({ runId: run.runId, status: run.status }, 'reconciled a run with no live job');
  }
  // A paused run whose every action is decided but whose resume was never enqueued (or was lost).
  for (const paused of await store.listResumablePausedRuns(olderThanMs, limit)) {
    checked++;
    if (await runQueue.liveJobFor(paused.runId)) continue;
    // Its resume job may have run out of retries (a worker left it for another definition's grace period).
    await runQueue.addReplacingEnded(resumeJob(paused.runId, paused.epoch));
    enqueued.push(paused.runId);
    logger.info({ runId: paused.runId }, 'reconciled a decided paused run with no resume job');
  }
  // An undecided action past its expiry whose delayed `expire` job was lost or never enqueued.
  const expired: string[] = [];
  for (const actionId of await store.listOverdueActions(olderThanMs, limit)) {
    const expiry = await store.expireAction(actionId);
    if (expiry.kind === 'unchanged') continue;
    expired.push(actionId);
    if (expiry.kind === 'rejected' && expiry.resume) await runQueue.addReplacingEnded(resumeJob(expiry.resume.rootRunId, expiry.resume.pausedEpoch));
    logger.info({ actionId, result: expiry.kind }, 'reconciled an overdue action whose expiry never ran');
  }
  const last = live.at(-1);
  const cursor = live.length === limit && last ? { updatedAt: last.updatedAt, runId: last.runId } : undefined;
  return { locked: true, checked, enqueued, expired, cursor };
}

/** A periodic reconciler. */
export interface ReconcilerHandle {
  stop(): Promise<void>;
}

/** Runs {@link reconcileOnce} every `intervalMs`, each pass after where the last stopped (errors are logged, never thrown). */
export function startReconciler(options: ReconcileOptions & { intervalMs: number }): ReconcilerHandle {
  const logger = options.logger ?? SILENT_LOGGER;
  let current: Promise<unknown> = Promise.resolve();
  let after: RunCursor | undefined;
  const timer = setInterval(() => {
    current = reconcileOnce({ ...options, after })
      .then((result) => {
        if (result.locked) after = result.cursor;
      })
      .catch((error: unknown) => logger.warn({ err: error }, 'reconcile pass failed'));
  }, options.intervalMs);
  timer.unref();
  return {
    stop: async () => {
      clearInterval(timer);
      await current;
    },
  };
}
