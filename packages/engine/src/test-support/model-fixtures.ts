import { expect } from 'vitest';
import { ModelError } from '../errors.js';
import type { Message } from '../messages.js';
import type { Model, ModelRequest, ModelStreamDelta, ToolSpec } from '../model.js';
import type { FakeOpenAIServer } from '../testing/fake-openai-server.js';

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

/**
 * Both adapters stream the same way: with `onDelta` they send `stream: true`,
 * hand over text and tool-call argument fragments as the server streams them,
 * and resolve with the same complete turn (fresh call ids, usage) as without.
 */
export async function expectStreamedTurns(model: Model, server: FakeOpenAIServer): Promise<void> {
  const text = 'Cairns are piles of stones that mark a trail.';
  server.enqueue({ kind: 'text', text, usage: { input: 11, output: 9 } });
  const deltas: ModelStreamDelta[] = [];
  const answer = await model.respond(ask([{ role: 'user', content: 'What is a cairn?' }], { onDelta: (d) => deltas.push(d) }));
  expect(server.requests.at(-1)?.body['stream']).toBe(true);
  expect(deltas.length).toBeGreaterThan(3);
  expect(deltas.every((d) => d.kind === 'text')).toBe(true);
  expect(deltas.map((d) => (d.kind === 'text' ? d.text : '')).join('')).toBe(text);
  expect(answer).toEqual({
    message: { role: 'assistant', content: text },
    usage: { inputTokens: 11, outputTokens: 9, totalTokens: 20 },
  });

  const calls = [
    { name: 'slow_search', arguments: { query: 'stone cairns in Scotland' } },
    { name: 'slow_search', arguments: { query: 'trail markers' } },
  ];
  server.enqueue({ kind: 'tool_calls', calls });
  const callDeltas: ModelStreamDelta[] = [];
  const turn = await model.respond(ask([{ role: 'user', content: 'Research cairns.' }], { onDelta: (d) => callDeltas.push(d) }));
  const toolCalls = turn.message.toolCalls ?? [];
  expect(toolCalls.map((c) => [c.name, JSON.parse(c.arguments)])).toEqual(calls.map((c) => [c.name, c.arguments]));
  expect(toolCalls.every((c) => /^call_/.test(c.id))).toBe(true);
  expect(new Set(toolCalls.map((c) => c.id)).size).toBe(2);
  const argsByIndex = new Map<number, string>();
  for (const d of callDeltas) {
    if (d.kind === 'tool-call') argsByIndex.set(d.index, (argsByIndex.get(d.index) ?? '') + d.arguments);
  }
  expect([...argsByIndex.values()]).toEqual(toolCalls.map((c) => c.arguments));
  expect(callDeltas.filter((d) => d.kind === 'tool-call').length).toBeGreaterThan(2);
}
