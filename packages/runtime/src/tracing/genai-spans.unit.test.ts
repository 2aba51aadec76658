import { describe, expect, it } from 'vitest';
import {
  chatResponseAttributes,
  chatSpan,
  contentAttributes,
  executeToolSpan,
  invokeAgentSpan,
  modelLabelParts,
} from './genai-spans.js';

describe('GenAI span names and attributes', () => {
  it('splits a model label into provider and model at its first colon', () => {
    expect(modelLabelParts('openai:gpt-5.4')).toEqual({ provider: 'openai', model: 'gpt-5.4' });
    expect(modelLabelParts('bedrock:anthropic.claude:v2')).toEqual({
      provider: 'bedrock',
      model: 'anthropic.claude:v2',
    });
    expect(modelLabelParts('my-model')).toEqual({ provider: undefined, model: 'my-model' });
    expect(modelLabelParts(':x')).toEqual({ provider: undefined, model: ':x' });
  });

  it('names spans `{operation} {target}` with the operation and its target as attributes', () => {
    expect(chatSpan('openai:gpt-5.4')).toEqual({
      name: 'chat gpt-5.4',
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': 'gpt-5.4',
        'gen_ai.provider.name': 'openai',
      },
    });
    expect(chatSpan('local').attributes).not.toHaveProperty('gen_ai.provider.name');
    expect(executeToolSpan('slow_search', 'call_1')).toEqual({
      name: 'execute_tool slow_search',
      attributes: {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': 'slow_search',
        'gen_ai.tool.call.id': 'call_1',
      },
    });
    expect(invokeAgentSpan('research-team', 'openai')).toEqual({
      name: 'invoke_agent research-team',
      attributes: {
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.agent.name': 'research-team',
        'gen_ai.provider.name': 'openai',
      },
    });
  });

  it("records the answering model and its finish reason as the conventions' response attributes", () => {
    expect(
      chatResponseAttributes({ responseModel: 'gpt-5.4-2026-01-15', finishReason: 'length' }),
    ).toEqual({
      'gen_ai.response.model': 'gpt-5.4-2026-01-15',
      'gen_ai.response.finish_reasons': ['length'],
    });
    expect(chatResponseAttributes({})).toEqual({});
  });

  it("shapes opt-in content as the conventions' message schemas: text, tool calls and tool responses as parts", () => {
    const attributes = contentAttributes({
      kind: 'model',
      runId: 'r1',
      instructions: 'Be brief.',
      messages: [
        { role: 'user', content: 'Research cairns.' },
        {
          role: 'assistant',
          content: null,
          toolCalls: [{ id: 'call_1', name: 'search', arguments: '{"q":"cairn"}' }],
        },
        { role: 'tool', toolCallId: 'call_1', name: 'search', content: 'stones' },
      ],
      response: {
        message: { role: 'assistant', content: 'Piles of stones.' },
        finishReason: 'stop',
      },
    });
    expect(JSON.parse(String(attributes['gen_ai.system_instructions']))).toEqual([
      { type: 'text', content: 'Be brief.' },
    ]);
    expect(JSON.parse(String(attributes['gen_ai.input.messages']))).toEqual([
      { role: 'user', parts: [{ type: 'text', content: 'Research cairns.' }] },
      {
        role: 'assistant',
        parts: [{ type: 'tool_call', id: 'call_1', name: 'search', arguments: { q: 'cairn' } }],
      },
      { role: 'tool', parts: [{ type: 'tool_call_response', id: 'call_1', response: 'stones' }] },
    ]);
    expect(JSON.parse(String(attributes['gen_ai.output.messages']))).toEqual([
      {
        role: 'assistant',
        parts: [{ type: 'text', content: 'Piles of stones.' }],
        finish_reason: 'stop',
      },
    ]);
    expect(
      contentAttributes({
        kind: 'tool',
        runId: 'r1',
        toolCallId: 'call_1',
        args: { q: 'cairn' },
        result: 'stones',
      }),
    ).toEqual({
      'gen_ai.tool.call.arguments': '{"q":"cairn"}',
      'gen_ai.tool.call.result': 'stones',
    });
  });
});
