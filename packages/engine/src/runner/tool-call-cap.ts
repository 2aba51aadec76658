import { TooManyToolCallsError } from '../errors.js';
import type { AssistantMessage } from '../messages.js';

/**
 * The most tool calls one model turn may ask for. A live turn with more ends
 * the run in ERROR ({@link TooManyToolCallsError}, the turn not kept), and a
 * run file with such a turn is refused (docs/operations.md, "Tool calls per turn").
 */
export const MAX_TOOL_CALLS_PER_TURN = 1_000;

/** Why a turn of `count` tool calls is refused, naming the cap; undefined when the cap allows it. */
export function toolCallCapProblem(count: number): string | undefined {
  return count > MAX_TOOL_CALLS_PER_TURN
    ? `${count} tool calls in one turn, more than MAX_TOOL_CALLS_PER_TURN (${MAX_TOOL_CALLS_PER_TURN}) allows`
    : undefined;
}

/** Throws {@link TooManyToolCallsError} when the model's turn asks for more tool calls than the cap. */
export function checkToolCallCap(runId: string, message: AssistantMessage): void {
  const count = message.toolCalls?.length ?? 0;
  const problem = toolCallCapProblem(count);
  if (problem !== undefined) throw new TooManyToolCallsError(runId, count, problem);
}
