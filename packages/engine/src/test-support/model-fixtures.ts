import { expect } from 'vitest';
import { ModelError } from '../errors.js';
import type { Message } from '../messages.js';
import type { ModelRequest, ToolSpec } from '../model.js';

/** The tool both adapter tests offer the model. */
export const SEARCH: ToolSpec = {
  name: 'slow_search',
  description: 'Searches the web.',
  parameters: {
    type: 'object',
    properties: { query: { type: 'string' } },
    required: ['query'],
    additionalProperties: false,
  },
};

/** A request with the researcher's instructions and the search tool. */
export function ask(messages: Message[], extra: Partial<ModelRequest> = {}): ModelRequest {
  return { instructions: 'You are a researcher.', messages, tools: [SEARCH], ...extra };
}

/** Awaits a rejection and checks that it is a {@link ModelError}. */
export async function modelError(promise: Promise<unknown>): Promise<ModelError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(ModelError);
  return error as ModelError;
}
