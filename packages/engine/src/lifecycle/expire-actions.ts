import { ApprovalTimeoutError, assertNever } from '../errors.js';
import type { ActionDecision, PendingActionRecord } from '../hitl/pending-action.js';
import type { DecisionStore, ExpiryOutcome } from '../run-control-store.js';
import { resumeIntent, type JobIntent } from './intents.js';
import type { PickupOutcome } from './pickup-types.js';
import { RUN_TRANSITIONS } from './run-status.js';

/** The message a rejection by timeout carries. */
export const APPROVAL_TIMED_OUT = 'approval timed out';

/** What an expiry does to an undecided action past its `expires_at`, by its `onTimeout`. */
export type ExpiryMove =
  /** Decide it as rejected with {@link APPROVAL_TIMED_OUT}; the tree resumes if it was its last (see `resumeWhenDecided`). */
  | { kind: 'reject'; decision: ActionDecision }
  /** End the tree's paused runs in ERROR by `transition`, with `error`; its other undecided actions are cancelled. */
  | {
      kind: 'error';
      transition: (typeof RUN_TRANSITIONS)['approvalTimeout'];
      error: ApprovalTimeoutError;
    };

/** The expiry of `action` (`onTimeout: 'reject'`, the default, or `'error'`): what the store's `expireAction` writes. */
export function expiryMoveOf(
  action: Pick<PendingActionRecord, 'actionId' | 'runId' | 'tool' | 'onTimeout'>,
): ExpiryMove {
  switch (action.onTimeout) {
    case 'reject':
      return { kind: 'reject', decision: { type: 'reject', message: APPROVAL_TIMED_OUT } };
    case 'error':
      return {
        kind: 'error',
        transition: RUN_TRANSITIONS.approvalTimeout,
        error: new ApprovalTimeoutError(action.runId, action.actionId, action.tool),
      };
    default:
      return assertNever(action.onTimeout);
  }
}

/**
 * The `expire` move of one action (its delayed job fired, or recovery found
 * it overdue): the store applies {@link expiryMoveOf} in one transaction;
 * a rejection that decided the tree's last action returns its resume as an intent.
 */
export async function expireAndResume(
  store: Pick<DecisionStore, 'expireAction'>,
  actionId: string,
  cause: 'expired' | 'recovered-overdue' = 'expired',
): Promise<{ outcome: ExpiryOutcome; intents: JobIntent[] }> {
  const outcome = await store.expireAction(actionId);
  const intents =
    outcome.kind === 'rejected' && outcome.resume ? [resumeIntent(outcome.resume, cause)] : [];
  return { outcome, intents };
}

/**
 * What a pause asks of the queue: one delayed `expire` job per undecided
 * action of the paused tree that has an `expires_at`.
 */
export async function pauseIntents(
  store: Pick<DecisionStore, 'listPendingActions'>,
  rootRunId: string,
): Promise<JobIntent[]> {
  const actions = await store.listPendingActions(rootRunId);
  return actions.flatMap((a): JobIntent[] =>
    a.expiresAt
      ? [
          {
            kind: 'enqueue',
            job: {
              name: 'expire',
              runId: rootRunId,
              actionId: a.actionId,
              expiresAt: a.expiresAt.toISOString(),
            },
            cause: 'paused',
          },
        ]
      : [],
  );
}

/**
 * What a pickup's outcome asks of the queue: a pickup that paused its run
 * needs the expiries of the paused tree's actions ({@link pauseIntents});
 * every other outcome needs nothing (a finish, a skip, a hand-over or a lost
 * lease leaves the job's own completion or retry to the queue).
 */
export async function pickupIntents(
  store: Pick<DecisionStore, 'listPendingActions'>,
  runId: string,
  outcome: PickupOutcome,
): Promise<JobIntent[]> {
  return outcome.kind === 'finished' && outcome.status === RUN_TRANSITIONS.pause.to
    ? pauseIntents(store, runId)
    : [];
}
