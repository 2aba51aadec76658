import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { UserError } from './errors.js';
import { Agent } from './agent.js';
import { tool } from './tool.js';
import { ScriptedModel } from './testing/scripted-model.js';

const echo = tool({
  name: 'echo',
  description: 'Echoes a word',
  parameters: z.object({ word: z.string() }),
  execute: ({ word }) => word,
});

describe('tool()', () => {
  it('sends the zod schema to the model as JSON Schema', () => {
    expect(echo.spec).toEqual({
      name: 'echo',
      description: 'Echoes a word',
      parameters: {
        type: 'object',
        properties: { word: { type: 'string' } },
        required: ['word'],
        additionalProperties: false,
      },
    });
  });

  it('refuses a schema that is not a z.object', () => {
    expect(() =>
      tool({ name: 'bad', description: '', parameters: z.string() as never, execute: () => 1 }),
    ).toThrow(new UserError('tool "bad": parameters must be a z.object(...) schema'));
  });

  it('refuses an invalid name', () => {
    expect(() =>
      tool({ name: 'has space', description: '', parameters: z.object({}), execute: () => 1 }),
    ).toThrow(/tool name "has space" is invalid/);
  });

  it('refuses two tools with the same name on one agent', () => {
    const model = new ScriptedModel({ decide: () => ({ text: 'hi' }) });
    expect(() => new Agent({ name: 'a', model, tools: [echo, echo] })).toThrow(
      new UserError('agent "a": duplicate tool name "echo"'),
    );
  });
});
