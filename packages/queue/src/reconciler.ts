import type { RecoveryPort, RunCursor } from '@cairn/engine/store';
import {
  SILENT_LOGGER,
  startPeriodicPass,
  type PeriodicPass,
  type WorkerLogger,
} from '@cairn/runtime';
import type { RunQueue } from './queue-backend.js';
import { RunEngine } from './run-engine.js';

/** Default number of runs (or overdue actions) one reconcile pass looks at, of each kind (live, decided paused, overdue). */
export const DEFAULT_RECONCILE_BATCH = 100;

/** Options of {@link reconcileOnce} and {@link startReconciler}. */
export interface ReconcileOptions {
  /** Recovery's reads and moves, and the fleet's reconciler lock (the store's operations part). */
  store: RecoveryPort;
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
  /** Runs past their deadline by more than `olderThanMs` this pass ended in ERROR (no execution had): the runs, not their members. */
  ended: string[];
  /** Where the scan of live runs stopped: the next pass starts after it; undefined once it reached the end. */
  cursor?: RunCursor;
}

/**
 * One pass of the `recover` move ({@link RunEngine.recover}: the runs past
 * their deadline it ends, which runs need a job, and the overdue actions it
 * expires), logged: a `continue` with reason `reconciled` for
 * top-level runs left PENDING or RUNNING with no live job (Redis lost,
 * enqueue failed after the row was written), the resume of PAUSED ones with
 * every action decided and no resume job; idempotent.
 * Bounded: one worker at a time (a Postgres advisory lock), at most
 * `batchSize` runs of each kind per pass, read through the partial indexes on
 * top-level runs by status and by deadline; `after` continues the scan where the last pass stopped.
 */
export async function reconcileOnce(
  options: ReconcileOptions & { after?: RunCursor },
): Promise<ReconcileResult> {
  const outcome = await options.store.whileReconciling(() => reconcileBatch(options));
  return outcome.locked
    ? outcome.result
    : { locked: false, checked: 0, enqueued: [], expired: [], ended: [] };
}

async function reconcileBatch(
  options: ReconcileOptions & { after?: RunCursor },
): Promise<ReconcileResult> {
  const logger = options.logger ?? SILENT_LOGGER;
  const runs = new RunEngine({ runQueue: options.runQueue, recovery: options.store });
  const { plan, results } = await runs.recover({
    olderThanMs: options.olderThanMs ?? 15_000,
    limit: options.batchSize ?? DEFAULT_RECONCILE_BATCH,
    after: options.after,
    now: new Date(),
  });
  for (const { runId, deadlineAt, runIds } of plan.deadlines)
    logger.info(
      { runId, deadlineAt: deadlineAt.toISOString(), memberRunIds: runIds.slice(1) },
      'ended a run past its deadline that no execution ended',
    );
  for (const { actionId, result } of plan.expired)
    logger.info({ actionId, result }, 'reconciled an overdue action whose expiry never ran');
  const enqueued: string[] = [];
  let checked = 0;
  plan.intents.forEach((intent, i) => {
    if (
      intent.kind !== 'enqueue' ||
      (intent.cause !== 'recovered-live' && intent.cause !== 'recovered-paused')
    )
      return;
    checked++;
    if (results[i] !== 'added') return;
    enqueued.push(intent.job.runId);
    logger.info(
      { runId: intent.job.runId, cause: intent.cause },
      intent.cause === 'recovered-live'
        ? 'reconciled a run with no live job'
        : 'reconciled a decided paused run with no resume job',
    );
  });
  return {
    locked: true,
    checked,
    enqueued,
    expired: plan.expired.map((e) => e.actionId),
    ended: plan.deadlines.map((d) => d.runId),
    cursor: plan.cursor,
  };
}

/** A periodic reconciler. */
export type ReconcilerHandle = PeriodicPass;

/** Runs {@link reconcileOnce} every `intervalMs`, each pass after where the last stopped (errors are logged, never thrown). */
export function startReconciler(
  options: ReconcileOptions & { intervalMs: number },
): ReconcilerHandle {
  const logger = options.logger ?? SILENT_LOGGER;
  let after: RunCursor | undefined;
  return startPeriodicPass(
    async () => {
      const result = await reconcileOnce({ ...options, after });
      if (result.locked) after = result.cursor;
    },
    {
      everyMs: options.intervalMs,
      onError: (error) => logger.warn({ err: error }, 'reconcile pass failed'),
    },
  );
}
