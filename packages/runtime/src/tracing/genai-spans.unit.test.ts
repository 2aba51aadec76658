import { describe, expect, it } from 'vitest';
import { chatSpan, executeToolSpan, invokeAgentSpan, modelLabelParts } from './genai-spans.js';

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
});
