import type { ModelRequest } from '../model.js';

/** Tokens a response is expected to add to its prompt, before its usage says. */
export const EXPECTED_OUTPUT_TOKENS = 256;

/**
 * A request's token estimate for a tokens-per-minute limit: its prompt
 * (instructions, messages and tool schemas, at about 4 characters a token)
 * plus {@link EXPECTED_OUTPUT_TOKENS}. The response's usage corrects it.
 */
export function estimateTokens(
  request: Pick<ModelRequest, 'instructions' | 'messages' | 'tools'>,
): number {
  let chars = request.instructions.length;
  for (const message of request.messages) chars += JSON.stringify(message).length;
  for (const tool of request.tools) chars += JSON.stringify(tool).length;
  return Math.ceil(chars / 4) + EXPECTED_OUTPUT_TOKENS;
}
