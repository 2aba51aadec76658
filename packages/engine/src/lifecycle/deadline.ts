import type { Clock } from '../engine-resources.js';
import { DeadlineExceededError } from '../errors.js';
import type { RecoveryStore } from '../run-control-store.js';
import type { RunRecord } from '../run-types.js';
import { errorInfo } from './run-ending.js';
import { RUN_TRANSITIONS } from './run-status.js';

/** True when the run has a deadline and it has passed at `now`. */
export function deadlinePassed(run: Pick<RunRecord, 'deadlineAt'>, now: Date): boolean {
  return run.deadlineAt !== null && run.deadlineAt.getTime() <= now.getTime();
}

/** An execution's abort signal with its run's deadline in it; `stop()` once the execution is over. */
export interface ExecutionSignal {
  signal: AbortSignal;
  /** Re-arms the timer for a deadline a continue moved while the execution runs (nothing once aborted). */
  moveTo(deadlineAt: Date | null): void;
  stop(): void;
}

/** The longest delay one Node timer takes (a longer one would fire at once). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The signal one execution of `run` runs under, armed at its claim from the
 * row the claim returned: aborted with {@link DeadlineExceededError} at the
 * run's deadline (at once when it has passed), and with `outer`'s reason when
 * `outer` aborts (a cancel, a lost lease, or, for a member run, its team's
 * deadline, restated as this run's own).
 */
export function deadlineSignal(
  run: Pick<RunRecord, 'runId' | 'deadlineAt'>,
  outer: AbortSignal | undefined,
  clock: Clock,
): ExecutionSignal {
  const controller = new AbortController();
  let cancelTimer: (() => void) | undefined;
  let stopped = false;
  const onOuter = () => controller.abort(restated(run.runId, outer?.reason));
  const stop = () => {
    stopped = true;
    cancelTimer?.();
    outer?.removeEventListener('abort', onOuter);
  };
  if (outer?.aborted) onOuter();
  else outer?.addEventListener('abort', onOuter, { once: true });
  let { deadlineAt } = run;
  const arm = () => {
    cancelTimer?.();
    if (stopped || controller.signal.aborted || deadlineAt === null) return;
    const leftMs = deadlineAt.getTime() - clock.now().getTime();
    if (leftMs <= 0) controller.abort(new DeadlineExceededError(run.runId, deadlineAt));
    else cancelTimer = clock.setTimer(Math.min(leftMs, MAX_TIMER_MS), arm);
  };
  arm();
  const moveTo = (to: Date | null) => {
    if (to?.getTime() === deadlineAt?.getTime()) return;
    deadlineAt = to;
    arm();
  };
  return { signal: controller.signal, moveTo, stop };
}

/** A team's deadline reaching its member run is the member's own (its deadline is its team's). */
function restated(runId: string, reason: unknown): unknown {
  return reason instanceof DeadlineExceededError && reason.runId !== runId
    ? new DeadlineExceededError(runId, reason.deadlineAt)
    : reason;
}

/** Options of {@link endRunsPastDeadline}. */
export interface DeadlineSweepOptions {
  /** How long past its deadline a run is left to the execution holding it, which ends it itself. */
  graceMs: number;
  /** Runs looked at per sweep. */
  limit: number;
}

/** A run the sweep ended, with the member runs it ended along. */
export interface DeadlineEnding {
  runId: string;
  deadlineAt: Date;
  /** Every run the end wrote: the run first, then its live member runs. */
  runIds: string[];
}

/**
 * The `deadline` move of runs no execution ends: top-level PENDING, RUNNING
 * or PAUSED runs whose deadline passed more than `graceMs` ago (a live worker
 * ends its run within moments of the deadline, so one that has not is dead,
 * none took the run in time, or it waits for a person who did not decide in
 * time) end in ERROR with `DeadlineExceededError`,
 * with their live member runs, each by one fenced write under the epoch the
 * run was read at that moves the epoch on: a worker still holding it (frozen,
 * or whose job is still locked) loses its next write. Its job, whenever a
 * worker picks it up, finds the run ended and skips it. At most `limit` runs.
 */
export async function endRunsPastDeadline(
  store: Pick<RecoveryStore, 'listRunsPastDeadline' | 'endPastDeadline'>,
  options: DeadlineSweepOptions,
): Promise<DeadlineEnding[]> {
  const { from } = RUN_TRANSITIONS.deadline;
  const due = await store.listRunsPastDeadline(from, options.graceMs, options.limit);
  const ended: DeadlineEnding[] = [];
  for (const run of due) {
    const runIds = await store.endPastDeadline(run.runId, {
      epoch: run.epoch,
      statuses: from,
      errorOf: (r) => errorInfo(new DeadlineExceededError(r.runId, r.deadlineAt)),
    });
    if (runIds) ended.push({ runId: run.runId, deadlineAt: run.deadlineAt, runIds });
  }
  return ended;
}
