import { canonicalDigest } from '../canonical-digest.js';
import type { ApprovalTimeoutOutcome } from '../tool.js';
import type { BudgetOption } from '../spend/budget-option.js';

/**
 * `approval`: a person approves, edits or rejects the call; `external`: a person (or another
 * system) supplies its result; `budget`: the run's tree would pass its budget with its next model
 * request, and a person raises the budget (approve) or ends the run (reject); `suspended`: an
 * operator suspended the run (or it used up its attempts under `CAIRN_ON_ATTEMPTS_EXHAUSTED=suspend`),
 * and approving it resumes the run.
 */
export const ACTION_KINDS = ['approval', 'external', 'budget', 'suspended'] as const;
/** One of {@link ACTION_KINDS}. */
export type ActionKind = (typeof ACTION_KINDS)[number];

/**
 * `pending`: waiting for a person; `decided`: a decision is recorded;
 * `expired`: nobody decided before `expires_at`; `cancelled`: its run was cancelled.
 */
export const ACTION_STATUSES = ['pending', 'decided', 'expired', 'cancelled'] as const;
/** One of {@link ACTION_STATUSES}. */
export type ActionStatus = (typeof ACTION_STATUSES)[number];

/** What a person decided about one gated call. */
export type ActionDecision =
  /** For a budget action, `budget` holds the raised limits (each above what was spent). */
  | { type: 'approve'; budget?: BudgetOption }
  | { type: 'edit'; args: Record<string, unknown> }
  | { type: 'reject'; message?: string }
  | { type: 'result'; output: string; isError?: boolean };

/** A gated tool call waiting for (or holding) a person's decision. */
export interface PendingActionRecord {
  /** Made by the server; unique across the team tree (and the database). */
  actionId: string;
  kind: ActionKind;
  /** The run that made the call (the member run for a member's action). */
  runId: string;
  /** The top-level run of the tree: the one a decision resumes. */
  rootRunId: string;
  /** Entity names from the root down to the run that made the call. */
  memberPath: string[];
  toolCallId: string;
  tool: string;
  args: unknown;
  /** {@link digestArgs} of `args`: a decision carrying another digest was made on stale arguments. */
  argsDigest: string;
  /** JSON Schema of the tool's parameters when the call paused: edited arguments must fit it (null: not checked before execution). */
  argsSchema: Record<string, unknown> | null;
  /** The tool batch of `runId` the call belongs to. */
  batch: number;
  status: ActionStatus;
  decision: ActionDecision | null;
  onTimeout: ApprovalTimeoutOutcome;
  expiresAt: Date | null;
  decidedAt: Date | null;
  /** Set by the fenced write that claims the decided call for execution: it never executes again. */
  consumedAt: Date | null;
  consumedEpoch: number | null;
  createdAt: Date;
}

/** A pending action as the engine creates it at a pause (the store adds the rest). */
export type NewPendingAction = Pick<
  PendingActionRecord,
  | 'actionId'
  | 'kind'
  | 'memberPath'
  | 'toolCallId'
  | 'tool'
  | 'args'
  | 'argsDigest'
  | 'argsSchema'
  | 'batch'
  | 'onTimeout'
  | 'expiresAt'
>;

/** A decision as posted: the action it is for, and optionally the digest the caller saw. */
export interface PostedDecision {
  actionId: string;
  decision: ActionDecision;
  argsDigest?: string;
}

/** What recording a set of decisions did. */
export interface DecisionsResult {
  applied: string[];
  alreadyDecided: string[];
  /** Undecided actions left in the run's tree. */
  pending: number;
  /** Status of the run the decisions were posted to. */
  status: string;
  /** Set when this call decided the tree's last pending action: the resume of its root run. */
  resume?: TreeResume;
}

/**
 * The resume of a paused tree whose every action is decided: its root run,
 * the epoch it paused in, and the root's tenant and priority, which give the
 * resume its slot in the tenant's fair line like a new run's job.
 */
export interface TreeResume {
  rootRunId: string;
  pausedEpoch: number;
  /** The root run's tenant (null: an admin key's run). */
  tenantId: string | null;
  /** The root run's priority, 1 (highest) to 10. */
  priority: number;
}

/** A pending action's `args_digest`: the {@link canonicalDigest} of its arguments, which a decision may quote to prove what it saw. */
export const digestArgs: (args: unknown) => string = canonicalDigest;

/** The idempotency key of a gated call's execution: derived from its action, so no retry of it runs under another key. */
export function actionIdempotencyKey(actionId: string): string {
  return `action:${actionId}`;
}

/** A pending action as the `RunPaused` event shows it. */
export function actionSummary(
  action: NewPendingAction | PendingActionRecord,
): Record<string, unknown> {
  return {
    action_id: action.actionId,
    kind: action.kind,
    tool: action.tool,
    tool_call_id: action.toolCallId,
    args: action.args,
    args_digest: action.argsDigest,
    member_path: action.memberPath,
    expires_at: action.expiresAt?.toISOString() ?? null,
  };
}
