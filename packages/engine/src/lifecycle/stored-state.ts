import { z } from 'zod';
import { StoredStateError } from '../errors.js';
import type { Message } from '../messages.js';

const TOOL_CALL = z.object({ id: z.string(), name: z.string(), arguments: z.string() });

/** A message of a run's history as it is stored: what this code can read. */
export const STORED_MESSAGE = z.discriminatedUnion('role', [
  z.object({ role: z.literal('user'), content: z.string() }),
  z.object({
    role: z.literal('assistant'),
    content: z.string().nullable(),
    toolCalls: z.array(TOOL_CALL).optional(),
  }),
  z.object({
    role: z.literal('tool'),
    toolCallId: z.string(),
    name: z.string(),
    content: z.string(),
    isError: z.boolean().optional(),
  }),
]);

/**
 * Checks a run's stored history before an execution resumes it: a message
 * this code cannot read ends the run in ERROR with a {@link StoredStateError}
 * naming it, instead of a crash on every pickup.
 */
export function parseStoredMessages(runId: string, messages: readonly unknown[]): Message[] {
  return messages.map((message, index) => {
    const parsed = STORED_MESSAGE.safeParse(message);
    if (!parsed.success) {
      throw new StoredStateError(
        runId,
        `message ${index}: ${z.prettifyError(parsed.error).replaceAll('\n', ' ')}`,
      );
    }
    return message as Message;
  });
}
