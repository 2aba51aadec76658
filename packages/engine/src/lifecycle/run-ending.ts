import {
  assertNever,
  DeadlineExceededError,
  LeaseLostError,
  SuspendRequestedError,
} from '../errors.js';
import type { Message, Usage } from '../messages.js';
import type { RunErrorInfo, RunRecord } from '../run-types.js';
import type { Checkpointer } from '../runner/checkpointer.js';
import { PauseSignal } from '../runner/pause-signal.js';
import { dispositionOfError, retryableHint } from './error-disposition.js';
import { interruptedToolResult } from './open-tool-calls.js';
import { FINAL_STATUSES, FINISH_EVENT_TYPE, type FinishStatus } from './run-status.js';

/** How an execution is about to end its run: the status, what the run row shows, and its final event's data. */
export interface RunEnding {
  status: FinishStatus;
  content: string | null;
  error: RunErrorInfo | null;
  event: Record<string, unknown>;
  /** The event the finish stores, when not the status's own ({@link FINISH_EVENT_TYPE}): `RunSuspended`. */
  eventType?: 'RunSuspended';
}

/** The ending of a run whose model gave its final answer. */
export function answeredEnding(content: string, usage: Usage): RunEnding {
  return { status: 'COMPLETED', content, error: null, event: { content, usage } };
}

/**
 * How an error ends the run: a pause PAUSED (so does a suspend with `now` of
 * another run of its tree; the suspended run itself ends by `suspendedNowSignal`), its deadline (the signal aborted
 * with `DeadlineExceededError`) ERROR with that error, a cancel (its signal
 * aborted otherwise) CANCELLED with the last assistant text, any other
 * `end-run-in-error` error ERROR. Rethrown when the run is not this execution's to end: a lost lease
 * belongs to another execution, a `retry-job` error resumes from the last checkpoint.
 */
export function endingOfError(
  error: unknown,
  signal: AbortSignal,
  messages: readonly Message[],
): RunEnding {
  if (signal.aborted && signal.reason instanceof LeaseLostError) throw signal.reason;
  if (error instanceof PauseSignal)
    return {
      status: 'PAUSED',
      content: null,
      error: null,
      event: error.data,
      ...(error.eventType === 'RunSuspended' && { eventType: error.eventType }),
    };
  // Another run of the tree was suspended with `now`: this one stops at its last checkpoint, PAUSED with it.
  if (signal.aborted && signal.reason instanceof SuspendRequestedError)
    return {
      status: 'PAUSED',
      content: null,
      error: null,
      event: { suspended_run_id: signal.reason.targetRunId },
    };
  const disposition = dispositionOfError(error);
  switch (disposition) {
    case 'stop-silently':
    case 'retry-job':
      throw error;
    case 'end-run-in-error':
      break;
    default:
      return assertNever(disposition);
  }
  if (signal.aborted && signal.reason instanceof DeadlineExceededError) {
    const info = errorInfo(signal.reason);
    return { status: 'ERROR', content: null, error: info, event: { error: info } };
  }
  if (signal.aborted) {
    const partial = lastAssistantText(messages);
    return { status: 'CANCELLED', content: partial, error: null, event: { content: partial } };
  }
  const info = errorInfo(error);
  return { status: 'ERROR', content: null, error: info, event: { error: info } };
}

/**
 * Writes the ending with its final event (stored in the same statement); a
 * final status closes the tool rows left `running` with
 * {@link interruptedToolResult}. Rejects with `ContinueArrivedError` when a
 * continue arrived that the execution has not taken in, unless `keeps` names
 * it: then the continue waits, its input untaken, for the next continue.
 */
export function writeEnding(
  checkpointer: Checkpointer,
  ending: RunEnding,
  usage: Usage,
  keeps?: { continueRequest: string },
): Promise<RunRecord> {
  const { status } = ending;
  return checkpointer.finish(status, ending.content, ending.error, usage, {
    type: ending.eventType ?? FINISH_EVENT_TYPE[status],
    data: ending.event,
    ...(FINAL_STATUSES.includes(status) && { openCallsResult: interruptedToolResult(status) }),
    ...(keeps && { keepsContinueRequest: keeps.continueRequest }),
  });
}

/** The error a run ends with, as stored and shown by the API. */
export function errorInfo(error: unknown): RunErrorInfo {
  const retryable = retryableHint(error);
  const base =
    error instanceof Error
      ? { name: error.name, message: error.message }
      : { name: 'Error', message: String(error) };
  return retryable === undefined ? base : { ...base, retryable };
}

function lastAssistantText(messages: readonly Message[]): string | null {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if (message?.role === 'assistant' && message.content) return message.content;
  }
  return null;
}
