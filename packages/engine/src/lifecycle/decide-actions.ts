import { ActionExpiredError, ArgsDigestMismatchError, DecisionConflictError } from '../errors.js';
import { digestArgs } from '../hitl/pending-action.js';
import type {
  ActionDecision,
  DecisionsResult,
  PendingActionRecord,
  PostedDecision,
  TreeResume,
} from '../hitl/pending-action.js';
import type { DecisionStore, DecisionValidator } from '../run-control-store.js';
import { resumeIntent, type JobIntent } from './intents.js';
import { canTransition, RUN_TRANSITIONS, type RunStatus } from './run-status.js';

/** What a posted decision does to its action: `record` it, or nothing (`already-decided`: the same decision again). */
export type DecisionVerdict = 'record' | 'already-decided';

/** What the store read under the action's row lock, for {@link judgeDecision}. */
export interface DecisionContext {
  /** The status of the run that made the call. */
  runStatus: RunStatus;
  /** True once the action's `expires_at` has passed (by the database's clock). */
  pastExpiry: boolean;
}

/** The run statuses a decision may be recorded in: a run waits for a person only while PAUSED. */
export const DECIDABLE_RUN_STATUSES: readonly RunStatus[] = RUN_TRANSITIONS.resumeFromPause.from;

/**
 * Judges one posted decision on its action: a decision is recorded once, the
 * same one again is a no-op at any time, and an undecided action takes one
 * only while it is not past its expiry and its run is PAUSED. Throws
 * `ArgsDigestMismatchError` (the caller saw other arguments),
 * `DecisionConflictError` (another decision recorded, the action cancelled,
 * or its run no longer PAUSED) or `ActionExpiredError`.
 */
export function judgeDecision(
  action: PendingActionRecord,
  posted: PostedDecision,
  context: DecisionContext,
): DecisionVerdict {
  if (posted.argsDigest !== undefined && posted.argsDigest !== action.argsDigest) {
    throw new ArgsDigestMismatchError(action.actionId, action.argsDigest, posted.argsDigest);
  }
  switch (action.status) {
    case 'decided':
      if (!sameDecision(action.decision, posted.decision)) {
        throw new DecisionConflictError(
          action.actionId,
          `action ${action.actionId} is already decided (${action.decision?.type ?? 'unknown'}); a decision is never replaced`,
        );
      }
      return 'already-decided';
    case 'expired':
      throw new ActionExpiredError(action.actionId);
    case 'cancelled':
      throw new DecisionConflictError(
        action.actionId,
        `action ${action.actionId} was cancelled with its run`,
      );
    case 'pending':
      break;
  }
  if (context.pastExpiry) throw new ActionExpiredError(action.actionId);
  if (!DECIDABLE_RUN_STATUSES.includes(context.runStatus)) {
    throw new DecisionConflictError(
      action.actionId,
      `action ${action.actionId} is undecided but its run ${action.runId} is ${context.runStatus}, no longer PAUSED`,
    );
  }
  return 'record';
}

/** A tree after some of its actions were decided (or expired as rejected), as the store read it in that transaction. */
export interface DecidedTree {
  rootRunId: string;
  /** The root run's status and epoch, read under its row lock. */
  rootStatus: RunStatus;
  rootEpoch: number;
  /** The root run's tenant and priority: its resume's place in the fair line. */
  rootTenantId: string | null;
  rootPriority: number;
  /** Undecided actions left in the tree. */
  pending: number;
  /** True when this transaction decided at least one action. */
  decidedNow: boolean;
}

/**
 * The tree resumes when its last action is decided: the root run to resume,
 * the epoch it paused in and its place in the fair line, when this
 * transaction decided the last pending action of a tree whose root is still
 * PAUSED; else undefined.
 */
export function resumeWhenDecided(tree: DecidedTree): TreeResume | undefined {
  if (!tree.decidedNow || tree.pending > 0 || !canTransition(tree.rootStatus, 'resumeFromPause'))
    return undefined;
  return {
    rootRunId: tree.rootRunId,
    pausedEpoch: tree.rootEpoch,
    tenantId: tree.rootTenantId,
    priority: tree.rootPriority,
  };
}

/** The decision as stored: optional fields that change nothing (`isError: false`, no message) left out. */
export function normalizeDecision(decision: ActionDecision): ActionDecision {
  switch (decision.type) {
    case 'approve':
      return decision.budget ? { type: 'approve', budget: decision.budget } : { type: 'approve' };
    case 'edit':
      return { type: 'edit', args: decision.args };
    case 'reject':
      return decision.message ? { type: 'reject', message: decision.message } : { type: 'reject' };
    case 'result':
      return decision.isError
        ? { type: 'result', output: decision.output, isError: true }
        : { type: 'result', output: decision.output };
  }
}

function sameDecision(recorded: ActionDecision | null, posted: ActionDecision): boolean {
  return (
    recorded !== null &&
    digestArgs(normalizeDecision(recorded)) === digestArgs(normalizeDecision(posted))
  );
}

/**
 * The `decide` move: records the decisions on the pending actions of a
 * run's tree (all or nothing, each by compare-and-set) and, when they decided
 * its last pending action, returns the resume of its root run as an intent.
 * Throws what the store's `decideActions` throws (see {@link judgeDecision}).
 */
export async function decideAndResume(
  store: Pick<DecisionStore, 'decideActions'>,
  runId: string,
  decisions: readonly PostedDecision[],
  validate: DecisionValidator,
): Promise<{ result: DecisionsResult; intents: JobIntent[] }> {
  const result = await store.decideActions(runId, decisions, validate);
  return { result, intents: result.resume ? [resumeIntent(result.resume, 'decided')] : [] };
}
