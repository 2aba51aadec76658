import type { Agent } from '../agent.js';
import type { Team } from '../team.js';
import type { EngineResources } from '../engine-resources.js';
import { definitionHashOf } from '../definition-hash.js';
import { memberEntityName } from '../entity-path.js';
import { MemberRunFailedError, RunNotContinuableError } from '../errors.js';
import type { CheckpointMode, RunRecord } from '../run-types.js';
import type { RunMember } from '../runner/delegation.js';
import { HandoverSignal } from '../runner/handover.js';
import { CapacityParkSignal } from '../capacity/capacity-park-signal.js';
import type { ExecuteOptions, ExecutionResult } from './execute-options.js';
import { PauseSignal } from '../runner/pause-signal.js';
import { actionSummary } from '../hitl/pending-action.js';
import { canTransition, CLAIMABLE_STATUSES, RUN_TRANSITIONS } from './run-status.js';

/** How a member run is executed: `executeRun`, handed in by the execution of its team (which `executeRun` imports this file for). */
export type ExecuteMemberRun = (
  resources: EngineResources,
  runId: string,
  options: ExecuteOptions,
) => Promise<ExecutionResult>;

const CHECKPOINT_STRENGTH: Record<CheckpointMode, number> = {
  run: 0,
  'tool-batch': 1,
  'tool-call': 2,
};

/**
 * Runs a team's delegations as member runs, one per delegation tool call:
 * the member run of a tool call is found by that call's id (the team's
 * delegation turn is committed before its delegations start), so a resumed
 * team reuses a COMPLETED member run, resumes an unfinished one, and never
 * delegates the same call twice; parallel delegations to the same member
 * each have their own member run.
 */
export function memberRunner(
  resources: EngineResources,
  execute: ExecuteMemberRun,
  parent: RunRecord,
  parentOptions: ExecuteOptions,
): RunMember {
  const { store } = resources;
  return async (member: Agent | Team, task, context) => {
    const existing = await store.findMemberRun(parent.runId, context.toolCallId);
    if (existing?.status === 'COMPLETED')
      return { output: existing.content ?? '', childRunId: existing.runId };
    if (existing && !canTransition(existing.status, 'claim') && existing.status !== 'PAUSED') {
      throw new MemberRunFailedError(
        existing.runId,
        member.name,
        existing.status,
        existing.error?.message ?? 'no answer',
      );
    }
    const child =
      existing ??
      (await store.createRun({
        // Named by its path (`research-team/researcher`): the member of THIS team, whatever other teams call theirs.
        entity: { kind: member.kind, name: memberEntityName(parent.entity.name, member.name) },
        input: task,
        sessionId: parent.sessionId,
        tenantId: parent.tenantId,
        userId: parent.userId,
        parentRunId: parent.runId,
        parentToolCallId: context.toolCallId,
        priority: parent.priority,
        // A team execution that lost its run (a zombie) must not start member work.
        parentEpoch: parent.epoch,
        checkpoint: strongerMode(parent.checkpoint, member.checkpoint),
        definitionHash: definitionHashOf(member),
        // What is left of its team's deadline (each claim of it takes its team's again).
        deadlineAt: parent.deadlineAt,
      }));
    const reason =
      child.status === 'PENDING'
        ? 'run'
        : parentOptions.reason === 'run'
          ? 'continue'
          : parentOptions.reason;
    let result: ExecutionResult;
    try {
      result = await execute(resources, child.runId, {
        reason,
        signal: context.signal,
        handover: parentOptions.handover,
        suspend: parentOptions.suspend,
        parentEpoch: parent.epoch,
        // The team's pickup checked its definition, members included: a member run resumes on this one.
        definition: { hash: definitionHashOf(member), replaces: child.definitionHash },
        // A member paused on its own pending actions resumes first, once they are decided.
        ...(child.status === 'PAUSED' && {
          from: [...CLAIMABLE_STATUSES, ...RUN_TRANSITIONS.resumeFromPause.from],
        }),
        context: parentOptions.context,
        carriedWait: parentOptions.carriedWait,
        spend: parentOptions.spend,
        member,
      });
    } catch (error) {
      // A member still waiting for a person keeps its team paused.
      if (error instanceof RunNotContinuableError && error.status === 'PAUSED')
        throw await memberPaused(resources, parent, child.runId);
      throw error;
    }
    if (result.outcome === 'handed-over') throw new HandoverSignal(child.runId);
    // A member parked for model capacity parks its whole tree: the team's job waits, then resumes it.
    if (result.outcome === 'parked') {
      const { model, retryAfterMs, waitedMs, waiter } = result.park;
      throw new CapacityParkSignal(child.runId, model, retryAfterMs, waitedMs, waiter);
    }
    const { run } = result;
    if (run.status === 'COMPLETED') return { output: run.content ?? '', childRunId: run.runId };
    // A team whose member paused is PAUSED too; it resumes after the member.
    if (run.status === 'PAUSED') throw await memberPaused(resources, parent, run.runId);
    throw new MemberRunFailedError(
      run.runId,
      member.name,
      run.status,
      run.error?.message ?? 'no answer',
    );
  };
}

/** The team's pause for a paused member: it lists the member's pending actions. */
async function memberPaused(
  resources: EngineResources,
  parent: RunRecord,
  memberRunId: string,
): Promise<PauseSignal> {
  const actions = (await resources.store.listRunActions(memberRunId)).filter(
    (a) => a.status === 'pending',
  );
  return new PauseSignal(parent.runId, { memberRunId, actions: actions.map(actionSummary) });
}

/** A member run checkpoints at least as often as its team. */
function strongerMode(a: CheckpointMode, b: CheckpointMode): CheckpointMode {
  return CHECKPOINT_STRENGTH[a] >= CHECKPOINT_STRENGTH[b] ? a : b;
}
