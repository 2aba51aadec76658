import { SYSTEM_CLOCK, type Clock } from '../engine-resources.js';
import type { CancelStore } from '../run-control-store.js';
import type { RunRecord } from '../run-types.js';
import type { JobPort } from './intents.js';
import { isStatusIn, IDLE_STATUSES, type RunStatus } from './run-status.js';

/** Statuses in which no worker executes a run, whatever its job's state. */
const EXECUTED_BY_NO_WORKER = ['PENDING', 'PAUSED'] as const satisfies readonly RunStatus[];

/** What {@link cancelRun} runs on. */
export interface CancelRunDeps {
  store: CancelStore;
  jobs: JobPort;
  /** How long to wait for the worker holding a running run before cancelling it here (its worker is taken for dead). */
  graceMs: number;
  /** How often the run is read while waiting. @defaultValue 100 */
  pollMs?: number;
  /** Times the grace. @defaultValue the wall clock */
  clock?: Clock;
}

/**
 * The `cancel` move. The run is marked (`requestCancel`, which refuses a
 * finished or unknown run); a queued or paused run, or one no worker executes
 * (its job waits, or is gone), is cancelled at once by a fenced `forceCancel` under
 * the epoch it was marked in, and its waiting job removed; a running one is
 * cancelled by the worker holding it (which aborts its calls and persists
 * CANCELLED with the partial output), or, if that worker does not within
 * `graceMs` (dead), by `forceCancel` here. Cancelling cascades to member
 * runs in the store's same write. Returns the run as it ended up.
 */
export async function cancelRun(deps: CancelRunDeps, runId: string): Promise<RunRecord> {
  const { store, jobs } = deps;
  const requested = await store.requestCancel(runId);
  const live = await jobs.liveJobOf(runId);
  // No worker executes a queued or a paused run, even while the job that paused it is still completing:
  // cancel it here, fenced on the epoch it was marked in (a resume that claimed it since refuses this).
  if (isStatusIn(requested.status, EXECUTED_BY_NO_WORKER) || !live?.active) {
    const cancelled = await store.forceCancel(runId, { onlyIfEpoch: requested.epoch });
    if (live)
      await jobs.carryOut([{ kind: 'remove-job', runId, jobId: live.jobId, cause: 'cancelled' }]);
    if (cancelled) return cancelled;
  }
  const clock = deps.clock ?? SYSTEM_CLOCK;
  const deadline = clock.now().getTime() + deps.graceMs;
  for (;;) {
    const run = await store.getRun(runId);
    if (!run || isStatusIn(run.status, IDLE_STATUSES)) return run ?? requested;
    if (clock.now().getTime() >= deadline) {
      return (await store.forceCancel(runId)) ?? (await store.getRun(runId)) ?? requested;
    }
    await new Promise((resolve) => setTimeout(resolve, deps.pollMs ?? 100));
  }
}
