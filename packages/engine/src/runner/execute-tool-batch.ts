import type { Clock } from '../engine-resources.js';
import { z } from 'zod';
import type { ToolCallRequest } from '../messages.js';
import { CheckpointWriteError, LeaseLostError } from '../errors.js';
import { AbortFanOut } from './abort-fan-out.js';
import { PauseSignal } from './pause-signal.js';
import { HandoverSignal } from './handover.js';
import { CapacityParkSignal } from '../capacity/capacity-park-signal.js';
import type { ExecutableTool, ToolInvocationResult } from '../executable-tool.js';
import {
  finishedOutcome,
  idempotencyKeyFor,
  parseToolArguments,
  recordedArguments,
  type ToolCallOutcome,
} from '../tool-call-outcome.js';

/** The run-level facts every call of a batch shares. */
export interface ToolBatchContext {
  runId: string;
  epoch: number;
  batch: number;
  signal: AbortSignal;
  tools: ReadonlyMap<string, ExecutableTool>;
  /** The app's context, handed to every tool as `ctx.context`. */
  appContext?: unknown;
  /** Times each call. */
  clock: Clock;
  /** The idempotency key of a call. @defaultValue {@link idempotencyKeyFor} the run and the call */
  idempotencyKeyOf?(call: ToolCallRequest): string;
  onCallStarted?(call: ToolCallRequest): void;
  onCallFinished?(outcome: ToolCallOutcome): void;
}

function keyOf(call: ToolCallRequest, context: ToolBatchContext): string {
  return context.idempotencyKeyOf?.(call) ?? idempotencyKeyFor(context.runId, call.id);
}

class ToolCallFailure extends Error {}

/** How long an aborted call may take to wind down before the batch gives up on it. */
const ABORT_GRACE_MS = 5_000;

/**
 * Runs one model turn's tool calls concurrently. Every failure of a call
 * (unknown tool, bad JSON, invalid arguments, a throw, a timeout, an
 * unserializable result) becomes an error result the model sees; only an
 * abort of the run's signal rejects.
 */
export async function executeToolBatch(
  calls: readonly ToolCallRequest[],
  context: ToolBatchContext,
): Promise<ToolCallOutcome[]> {
  // A call started under a signal aborted already would never see the abort.
  context.signal.throwIfAborted();
  const fanOut = new AbortFanOut(context.signal);
  const running = calls.map((call) => executeToolCall(call, context, fanOut));
  // Calls still running after one stopped the batch (a pause, a handover) keep following the signal.
  const closed = Promise.allSettled(running).then(() => fanOut.close());
  const outcomes = await Promise.all(running);
  await closed;
  context.signal.throwIfAborted();
  return outcomes;
}

async function executeToolCall(
  call: ToolCallRequest,
  context: ToolBatchContext,
  fanOut: AbortFanOut,
): Promise<ToolCallOutcome> {
  const startedAt = context.clock.now();
  context.onCallStarted?.(call);
  let args: unknown = recordedArguments(call);
  let content: string;
  let isError = false;
  let childRunId: string | null = null;
  try {
    const tool = context.tools.get(call.name);
    if (!tool) {
      const known = [...context.tools.keys()].join(', ') || 'none';
      throw new ToolCallFailure(`Unknown tool "${call.name}". Available tools: ${known}.`);
    }
    args = parseArguments(call);
    const parsed = tool.parameters.safeParse(args);
    if (!parsed.success) {
      throw new ToolCallFailure(
        `Invalid arguments for tool "${call.name}": ${z.prettifyError(parsed.error)}`,
      );
    }
    const result = await invokeWithTimeout(tool, parsed.data, call, context, fanOut);
    childRunId = result.childRunId ?? null;
    content = serializeOutput(call.name, result.output);
  } catch (error) {
    context.signal.throwIfAborted();
    if (stopsTheRun(error)) throw error;
    isError = true;
    content =
      error instanceof ToolCallFailure
        ? error.message
        : `Tool "${call.name}" failed: ${error instanceof Error ? error.message : String(error)}`;
  }
  const outcome = finishedOutcome(call, {
    args,
    content,
    isError,
    batch: context.batch,
    idempotencyKey: keyOf(call, context),
    childRunId,
    startedAt,
  });
  context.onCallFinished?.(outcome);
  return outcome;
}

/** Errors that end the execution instead of becoming a tool result the model sees. */
function stopsTheRun(error: unknown): boolean {
  return (
    error instanceof HandoverSignal ||
    error instanceof CapacityParkSignal ||
    error instanceof PauseSignal ||
    error instanceof LeaseLostError ||
    error instanceof CheckpointWriteError
  );
}

function parseArguments(call: ToolCallRequest): unknown {
  try {
    return parseToolArguments(call);
  } catch (error) {
    throw new ToolCallFailure(
      `Invalid JSON in arguments for tool "${call.name}": ${(error as Error).message}`,
    );
  }
}

async function invokeWithTimeout(
  tool: ExecutableTool,
  args: unknown,
  call: ToolCallRequest,
  context: ToolBatchContext,
  fanOut: AbortFanOut,
): Promise<ToolInvocationResult> {
  const callController = fanOut.open();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = new ToolCallFailure(
        `Tool "${tool.name}" timed out after ${tool.timeoutMs} ms.`,
      );
      callController.abort(error);
      reject(error);
    }, tool.timeoutMs);
  });
  const invocation = tool.invoke(args, {
    signal: callController.signal,
    runId: context.runId,
    toolCallId: call.id,
    idempotencyKey: keyOf(call, context),
    epoch: context.epoch,
    context: context.appContext,
  });
  const aborted = new Promise<never>((_, reject) => {
    callController.signal.addEventListener(
      'abort',
      () => {
        // Give the tool a moment to wind down (a member run persists its CANCELLED status).
        const grace = new Promise((resolve) => setTimeout(resolve, ABORT_GRACE_MS).unref());
        void Promise.race([invocation.catch(() => undefined), grace]).then(() =>
          reject(callController.signal.reason),
        );
      },
      { once: true },
    );
  });
  try {
    return await Promise.race([invocation, timeout, aborted]);
  } finally {
    clearTimeout(timer);
    fanOut.release(callController);
  }
}

function serializeOutput(toolName: string, output: unknown): string {
  if (typeof output === 'string') return output;
  if (output === undefined) return '';
  try {
    const text = JSON.stringify(output);
    if (text === undefined) throw new Error(`${typeof output} has no JSON form`);
    return text;
  } catch (error) {
    throw new ToolCallFailure(
      `Tool "${toolName}" returned a value that cannot be serialized: ${(error as Error).message}`,
    );
  }
}
