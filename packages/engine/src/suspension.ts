import {
  actionSummary,
  digestArgs,
  type NewPendingAction,
  type PendingActionRecord,
} from './hitl/pending-action.js';
import type { SuspendRequest } from './run-types.js';

/*
 * A suspension, as both the lifecycle (its moves) and the runner (a checkpoint
 * boundary's pause) make it: why a run waits suspended, the `suspended` action it
 * waits on, its `RunSuspended` event, and the requests an execution tree follows.
 */

/** Why a run waits suspended: an operator asked (`operator`), or it used up its attempts under `CAIRN_ON_ATTEMPTS_EXHAUSTED=suspend`. */
export type SuspendReason = 'operator' | 'attempts_exhausted';

/** What a run that used up `CAIRN_MAX_ATTEMPTS` does: end in ERROR (`error`, the default) or wait suspended (`suspend`). */
export const ON_ATTEMPTS_EXHAUSTED = ['error', 'suspend'] as const;
/** One of {@link ON_ATTEMPTS_EXHAUSTED}. */
export type OnAttemptsExhausted = (typeof ON_ATTEMPTS_EXHAUSTED)[number];

/** The tool-call id of a `suspended` action: one per epoch of the run it stops. */
export function suspendedCallId(epoch: number): string {
  return `suspend:${epoch}`;
}

/**
 * The pending action a suspended run waits on: approving it (a decision, or
 * `POST /v1/runs/:run_id/resume`) resumes the run; it never expires.
 */
export function suspendedAction(
  actionId: string,
  memberPath: string[],
  epoch: number,
  batch: number,
  reason: SuspendReason,
  now = false,
): NewPendingAction {
  const args = { reason, ...(now && { now: true }) };
  return {
    actionId,
    kind: 'suspended',
    memberPath,
    toolCallId: suspendedCallId(epoch),
    tool: 'suspend',
    args,
    argsDigest: digestArgs(args),
    argsSchema: null,
    batch,
    onTimeout: 'reject',
    expiresAt: null,
  };
}

/** The `RunSuspended` event's data for a run paused on `action`. */
export function suspendedEventData(action: NewPendingAction | PendingActionRecord): {
  reason: SuspendReason;
  action_id: string;
  actions: Record<string, unknown>[];
} {
  const { reason } = action.args as { reason: SuspendReason };
  return { reason, action_id: action.actionId, actions: [actionSummary(action)] };
}

/**
 * The suspend requests an execution tree follows (one per root execution,
 * handed to its member runs): set from the root's claim and by its lease
 * watch; each execution asks at its checkpoint boundaries whether it is the
 * one to stop.
 */
export class SuspendSwitch {
  private request: SuspendRequest | undefined;

  /** Records the root's request (a later one replaces it: `now` may be asked for after a plain suspend). */
  set(request: SuspendRequest | null | undefined): void {
    if (request) this.request = request;
  }

  /** The request naming `runId`, if any. */
  requestFor(runId: string): SuspendRequest | undefined {
    return this.request?.runId === runId ? this.request : undefined;
  }
}
