import type { ExpiryOutcome, RecoveryStore, RunCursor } from '../run-control-store.js';
import { CONTINUE_IN_PLACE_STATUSES } from './continue-rules.js';
import { deadlinePassed, endRunsPastDeadline, type DeadlineEnding } from './deadline.js';
import { expireAndResume } from './expire-actions.js';
import { fairLinePlaceOf, resumeIntent, type JobIntent } from './intents.js';
import { LIVE_STATUSES } from './run-status.js';

/** Options of {@link recoveryIntents}. */
export interface RecoveryOptions {
  /** Only runs not updated for this long (a run just created may not have its job yet), and actions overdue by as much. */
  olderThanMs: number;
  /** Runs (or overdue actions) looked at, of each kind. */
  limit: number;
  /** Where the last scan of live runs stopped. */
  after?: RunCursor;
  /** The time now, to tell runs past their deadline (the caller's clock). */
  now: Date;
}

/** What one recovery scan found and did. */
export interface RecoveryPlan {
  /**
   * The jobs runs need, each only while the run has no live job: a `continue`
   * (reason `reconciled`) of every top-level PENDING or RUNNING run and of
   * every ERROR run whose continue request waits, the resume of every paused
   * tree whose actions are all decided; then the resumes the expiries below decided.
   */
  intents: JobIntent[];
  /** Overdue actions this scan expired, and how. */
  expired: { actionId: string; result: Exclude<ExpiryOutcome['kind'], 'unchanged'> }[];
  /** Runs past their deadline by more than `olderThanMs` that this scan ended in ERROR (no execution had). */
  deadlines: DeadlineEnding[];
  /** Where the scan of live runs stopped: the next scan starts after it; undefined once it reached the end. */
  cursor?: RunCursor;
}

/**
 * The `recover` move: first the runs past their deadline by more than
 * `olderThanMs` that no execution ended ({@link endRunsPastDeadline}: ended
 * here); then which runs need a job. Runs left PENDING or RUNNING
 * with no live job (the queue lost it, or the enqueue failed after the row
 * was written), ERROR runs whose stored continue never reached the queue
 * (but those past their deadline, which wait for a continue with a new one),
 * PAUSED trees with every action decided whose resume was never enqueued (or
 * ran out of retries), and undecided actions past their expiry whose delayed
 * `expire` job never ran (expired here). Idempotent: a run has at most one
 * live job and an expiry decides an action once. Bounded by `limit` of each kind.
 */
export async function recoveryIntents(
  store: RecoveryStore,
  options: RecoveryOptions,
): Promise<RecoveryPlan> {
  const { olderThanMs, limit } = options;
  const { now } = options;
  const deadlines = await endRunsPastDeadline(store, { graceMs: olderThanMs, limit });
  const live = await store.listRunsByStatus(LIVE_STATUSES, olderThanMs, {
    topLevelOnly: true,
    limit,
    after: options.after,
  });
  const runs = [
    ...live,
    // An ERROR run whose continue was stored but whose job never made it to the queue.
    // (Past its deadline it waits for a continue that gives it a new one: its pickup would only end it again.)
    ...(
      await store.listRunsWithWaitingContinue(
        CONTINUE_IN_PLACE_STATUSES.filter((s) => !LIVE_STATUSES.includes(s)),
        olderThanMs,
        limit,
      )
    ).filter((run) => !deadlinePassed(run, now)),
  ];
  const intents: JobIntent[] = runs
    // A member run is its team's business: never recovered on its own.
    .filter((run) => run.parentRunId === null)
    .map((run) => ({
      kind: 'enqueue',
      job: { name: 'continue', runId: run.runId, reason: 'reconciled', ...fairLinePlaceOf(run) },
      cause: 'recovered-live',
      onlyWithoutLiveJob: true,
    }));
  for (const resume of await store.listResumablePausedRuns(olderThanMs, limit))
    intents.push(resumeIntent(resume, 'recovered-paused'));
  const expired: RecoveryPlan['expired'] = [];
  for (const actionId of await store.listOverdueActions(olderThanMs, limit)) {
    const expiry = await expireAndResume(store, actionId, 'recovered-overdue');
    if (expiry.outcome.kind === 'unchanged') continue;
    expired.push({ actionId, result: expiry.outcome.kind });
    intents.push(...expiry.intents);
  }
  const last = live.at(-1);
  const cursor =
    live.length === limit && last ? { updatedAt: last.updatedAt, runId: last.runId } : undefined;
  return { intents, expired, deadlines, ...(cursor && { cursor }) };
}
