import type { ToolCallRequest, ToolResultMessage } from './messages.js';
import type { ToolCallRecord } from './run-types.js';

/** One finished call: the message the model will see and the row to store. */
export interface ToolCallOutcome {
  message: ToolResultMessage;
  record: ToolCallRecord;
}

/** The idempotency key of a call: the same every time the same call of the same run runs. */
export function idempotencyKeyFor(runId: string, toolCallId: string): string {
  return `${runId}:${toolCallId}`;
}

/** How a finished call ended, for {@link finishedOutcome}. */
export interface FinishedCall {
  args: unknown;
  content: string;
  isError: boolean;
  batch: number;
  idempotencyKey: string;
  childRunId: string | null;
  startedAt: Date;
  /** @defaultValue now */
  endedAt?: Date;
}

/** The tool message and the tool-call record of a finished call: one shape for every way a call ends. */
export function finishedOutcome(call: ToolCallRequest, finished: FinishedCall): ToolCallOutcome {
  const { content, isError } = finished;
  return {
    message: {
      role: 'tool',
      toolCallId: call.id,
      name: call.name,
      content,
      ...(isError && { isError }),
    },
    record: {
      toolCallId: call.id,
      name: call.name,
      args: finished.args,
      result: content,
      status: isError ? 'error' : 'completed',
      batch: finished.batch,
      idempotencyKey: finished.idempotencyKey,
      childRunId: finished.childRunId,
      startedAt: finished.startedAt,
      endedAt: finished.endedAt ?? new Date(),
    },
  };
}

/** A call's arguments parsed from the model's JSON text (an empty text is `{}`); throws the `SyntaxError` of text that is not JSON. */
export function parseToolArguments(call: ToolCallRequest): unknown {
  return call.arguments.trim() === '' ? {} : JSON.parse(call.arguments);
}

/**
 * A call's arguments as its tool-call record holds them, the same while it
 * runs and once it finished: the parsed JSON, or the model's raw text when
 * that is not JSON.
 */
export function recordedArguments(call: ToolCallRequest): unknown {
  try {
    return parseToolArguments(call);
  } catch {
    return call.arguments;
  }
}
