import { CONTINUE_IN_PLACE_STATUSES, LIVE_STATUSES } from '@cairn/engine';
import type { PostgresCheckpointStore } from '@cairn/store';
import type { RunQueue } from './queue-backend.js';
import { SILENT_LOGGER, type WorkerLogger } from './worker-logger.js';

/** Options of {@link reconcileOnce} and {@link startReconciler}. */
export interface ReconcileOptions {
  store: PostgresCheckpointStore;
  runQueue: RunQueue;
  /** Only runs not updated for this long (a run just created may not have its job yet). @defaultValue 15000 */
  olderThanMs?: number;
  logger?: WorkerLogger;
}

/** What one pass did. */
export interface ReconcileResult {
  /** Top-level PENDING or RUNNING runs looked at. */
  checked: number;
  /** Run ids a `continue` (reason `reconciled`) was enqueued for. */
  enqueued: string[];
}

/**
 * Finds top-level runs left PENDING or RUNNING with no live job (Redis lost,
 * enqueue failed after the row was written) and enqueues a `continue` with
 * reason `reconciled`, and PAUSED ones with every action decided and no
 * resume job (their resume); idempotent, since a run has at most one live job.
 */
export async function reconcileOnce(options: ReconcileOptions): Promise<ReconcileResult> {
  const { store, runQueue } = options;
  const olderThanMs = options.olderThanMs ?? 15_000;
  const runs = [
    ...(await store.listRunsByStatus(LIVE_STATUSES, olderThanMs)),
    // An ERROR run whose continue was stored but whose job never made it to the queue.
    ...(await store.listRunsWithWaitingContinue(CONTINUE_IN_PLACE_STATUSES.filter((s) => !LIVE_STATUSES.includes(s)), olderThanMs)),
  ];
  const enqueued: string[] = [];
  let checked = 0;
  for (const run of runs) {
    if (run.parentRunId !== null) continue;
    checked++;
    if (await runQueue.liveJobFor(run.runId)) continue;
    await runQueue.add({ name: 'continue', data: { runId: run.runId, reason: 'reconciled' } });
    enqueued.push(run.runId);
    (options.logger ?? SILENT_LOGGER).info({ runId: run.runId, status: run.status }, 'reconciled a run with no live job');
  }
  // A paused run whose every action is decided but whose resume was never enqueued (or was lost).
  for (const paused of await store.listResumablePausedRuns(options.olderThanMs ?? 15_000)) {
    checked++;
    if (await runQueue.liveJobFor(paused.runId)) continue;
    await runQueue.add({ name: 'continue', data: { runId: paused.runId, reason: 'continue', resumeOf: paused.epoch } });
    enqueued.push(paused.runId);
    (options.logger ?? SILENT_LOGGER).info({ runId: paused.runId }, 'reconciled a decided paused run with no resume job');
  }
  return { checked, enqueued };
}

/** A periodic reconciler. */
export interface ReconcilerHandle {
  stop(): Promise<void>;
}

/** Runs {@link reconcileOnce} every `intervalMs` (errors are logged, never thrown). */
export function startReconciler(options: ReconcileOptions & { intervalMs: number }): ReconcilerHandle {
  const logger = options.logger ?? SILENT_LOGGER;
  let current: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    current = reconcileOnce(options).catch((error: unknown) => logger.warn({ err: error }, 'reconcile pass failed'));
  }, options.intervalMs);
  timer.unref();
  return {
    stop: async () => {
      clearInterval(timer);
      await current;
    },
  };
}
