import { randomUUID } from 'node:crypto';
import type { ToolCallRequest } from '../messages.js';
import type { ExecutableTool, ToolGate } from '../executable-tool.js';
import type { Clock } from '../engine-resources.js';
import {
  finishedOutcome,
  idempotencyKeyFor,
  parseToolArguments,
  recordedArguments,
  type ToolCallOutcome,
} from '../tool-call-outcome.js';
import type { NewPendingAction, PendingActionRecord } from './pending-action.js';
import { actionIdempotencyKey, digestArgs } from './pending-action.js';

/** What a tool batch does with each of its calls. */
export interface ToolCallPlan {
  /** Calls nobody needs to look at: executed at once, concurrently. */
  execute: ToolCallRequest[];
  /** Approved or edited calls: consumed then executed one at a time, in the order they were decided. */
  decided: DecidedCall[];
  /** Calls whose result is already known (rejected, supplied externally, cancelled): no execution. */
  settled: ToolCallOutcome[];
  /** Gated calls seen for the first time: one new pending action each; the run pauses. */
  gated: { call: ToolCallRequest; action: NewPendingAction }[];
  /** Calls whose action is still undecided (a run continued by hand): the run pauses again. */
  waiting: PendingActionRecord[];
}

/** An approved (or edited) gated call, with the arguments it runs with. */
export interface DecidedCall {
  call: ToolCallRequest;
  action: PendingActionRecord;
  args: unknown;
  edited: boolean;
}

/** What {@link planToolCalls} needs from the execution. */
export interface PlanContext {
  runId: string;
  batch: number;
  signal: AbortSignal;
  tools: ReadonlyMap<string, ExecutableTool>;
  /** The run's actions by tool call id (empty for a fresh model turn). */
  actions: ReadonlyMap<string, PendingActionRecord>;
  /** Entity names from the root run down to this one. */
  memberPath(): Promise<string[]>;
  /** The engine's clock: a new action's `expiresAt`, a settled call's times. */
  clock: Clock;
}

/**
 * Sorts a model turn's calls: a call with an action follows its decision;
 * a call of a gated tool whose `needsApproval` holds for its (valid)
 * arguments becomes a new pending action; every other call executes. Calls
 * with unparsable or invalid arguments are never gated: the executor turns
 * them into the error the model sees, and nothing runs.
 */
export async function planToolCalls(
  calls: readonly ToolCallRequest[],
  context: PlanContext,
): Promise<ToolCallPlan> {
  const plan: ToolCallPlan = { execute: [], decided: [], settled: [], gated: [], waiting: [] };
  for (const call of calls) {
    const action = context.actions.get(call.id);
    if (action) {
      followDecision(plan, call, action, context.batch, context.clock.now());
      continue;
    }
    const tool = context.tools.get(call.name);
    const args = tool?.gate && validArgs(tool, call);
    if (!tool?.gate || args === undefined) {
      plan.execute.push(call);
      continue;
    }
    let gated: boolean;
    try {
      gated = await tool.gate.isGated(args.value, {
        runId: context.runId,
        toolCallId: call.id,
        signal: context.signal,
      });
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      plan.settled.push(
        settledOutcome(
          call,
          context.runId,
          context.batch,
          `Tool "${call.name}" was not run: its approval check failed: ${reason}`,
          true,
          context.clock.now(),
        ),
      );
      continue;
    }
    if (!gated) {
      plan.execute.push(call);
      continue;
    }
    plan.gated.push({
      call,
      action: newAction(
        call,
        args.value,
        tool.gate,
        tool,
        context.batch,
        await context.memberPath(),
        context.clock.now(),
      ),
    });
  }
  plan.decided.sort(
    (a, b) => (a.action.decidedAt?.getTime() ?? 0) - (b.action.decidedAt?.getTime() ?? 0),
  );
  return plan;
}

function followDecision(
  plan: ToolCallPlan,
  call: ToolCallRequest,
  action: PendingActionRecord,
  batch: number,
  now: Date,
): void {
  const settle = (content: string, isError: boolean) =>
    plan.settled.push(
      settledOutcome(
        call,
        action.runId,
        batch,
        content,
        isError,
        now,
        actionIdempotencyKey(action.actionId),
      ),
    );
  const decision = action.decision;
  if (action.status === 'pending') {
    plan.waiting.push(action);
    return;
  }
  if (action.status === 'cancelled' || !decision) {
    const why =
      action.status === 'cancelled'
        ? 'it was cancelled before anyone decided it'
        : 'nobody decided it in time (approval timed out)';
    settle(`Tool "${call.name}" was not run: ${why}.`, true);
    return;
  }
  switch (decision.type) {
    case 'approve':
      plan.decided.push({ call, action, args: action.args, edited: false });
      return;
    case 'edit':
      plan.decided.push({ call, action, args: decision.args, edited: true });
      return;
    case 'reject':
      settle(rejectionMessage(call.name, decision.message), true);
      return;
    case 'result':
      settle(decision.output, decision.isError === true);
      return;
  }
}

/** The tool message a rejected call gives the model. */
export function rejectionMessage(tool: string, message: string | undefined): string {
  return `A person rejected this call of tool "${tool}"; it was not run.${message ? ` Their message: ${message}` : ''}`;
}

/** The note an edited call's result starts with, so the model knows what actually ran. */
export function editedNote(args: unknown): string {
  return `A person edited the arguments before the call ran; it ran with ${JSON.stringify(args)}.\n\n`;
}

/** The result of an approved call whose execution was claimed before but never recorded (its worker died). */
export function interruptedMessage(tool: string, args: unknown, actionId: string): string {
  return (
    `Tool "${tool}" with ${JSON.stringify(args)} was started after its approval (action ${actionId}) but the worker running it stopped ` +
    `before its result was saved; it was not run again, so it runs at most once. Check its effect before retrying.`
  );
}

function validArgs(tool: ExecutableTool, call: ToolCallRequest): { value: unknown } | undefined {
  let raw: unknown;
  try {
    raw = parseToolArguments(call);
  } catch {
    return undefined;
  }
  const parsed = tool.parameters.safeParse(raw);
  return parsed.success ? { value: raw } : undefined;
}

function newAction(
  call: ToolCallRequest,
  args: unknown,
  gate: ToolGate,
  tool: ExecutableTool,
  batch: number,
  memberPath: string[],
  now: Date,
): NewPendingAction {
  const { timeoutMs, onTimeout } = gate.approval;
  return {
    actionId: `act_${randomUUID()}`,
    kind: gate.external ? 'external' : 'approval',
    memberPath,
    toolCallId: call.id,
    tool: call.name,
    args,
    argsDigest: digestArgs(args),
    argsSchema: tool.spec.parameters,
    batch,
    onTimeout,
    expiresAt: timeoutMs === null ? null : new Date(now.getTime() + timeoutMs),
  };
}

function settledOutcome(
  call: ToolCallRequest,
  runId: string,
  batch: number,
  content: string,
  isError: boolean,
  now: Date,
  idempotencyKey = idempotencyKeyFor(runId, call.id),
): ToolCallOutcome {
  return finishedOutcome(call, {
    args: recordedArguments(call),
    content,
    isError,
    batch,
    idempotencyKey,
    childRunId: null,
    startedAt: now,
    endedAt: now,
  });
}
