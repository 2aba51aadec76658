import type { Message, ToolCallRequest } from '../messages.js';
import type { ToolSpec } from '../model.js';
import type { FakeOpenAIReply } from './fake-openai-reply.js';
import type { ScriptContext, ScriptedReply } from './scripted-model.js';

type Item = Record<string, unknown>;

/** What a script sees of a Chat Completions or Responses request body: its messages, instructions and tools. */
export function contextOfRequest(path: string, body: Item): ScriptContext {
  const { messages, instructions } =
    path === '/v1/responses' ? fromResponsesInput(body) : fromChatMessages(body);
  const tools = ((body['tools'] ?? []) as Item[]).map((tool): ToolSpec => {
    const fn = (tool['function'] ?? tool) as Item;
    return {
      name: String(fn['name']),
      description: String(fn['description'] ?? ''),
      parameters: (fn['parameters'] ?? {}) as Record<string, unknown>,
    };
  });
  return {
    messages,
    instructions,
    tools,
    turn: messages.filter((m) => m.role === 'assistant').length,
  };
}

/** A script's reply as the fake server's reply (call ids generated, as a real server's). */
export function replyOfScript(reply: ScriptedReply): FakeOpenAIReply {
  return 'toolCalls' in reply
    ? { kind: 'tool_calls', calls: reply.toolCalls }
    : { kind: 'text', text: reply.text };
}

function fromChatMessages(body: Item): { messages: Message[]; instructions: string } {
  const names = new Map<string, string>();
  let instructions = '';
  const messages: Message[] = [];
  for (const message of (body['messages'] ?? []) as Item[]) {
    const content = typeof message['content'] === 'string' ? message['content'] : null;
    if (message['role'] === 'system') instructions = content ?? '';
    else if (message['role'] === 'user') messages.push({ role: 'user', content: content ?? '' });
    else if (message['role'] === 'assistant') {
      const toolCalls = ((message['tool_calls'] ?? []) as Item[]).map((call): ToolCallRequest => {
        const fn = call['function'] as Item;
        names.set(String(call['id']), String(fn['name']));
        return {
          id: String(call['id']),
          name: String(fn['name']),
          arguments: String(fn['arguments']),
        };
      });
      messages.push({ role: 'assistant', content, ...(toolCalls.length ? { toolCalls } : {}) });
    } else if (message['role'] === 'tool') {
      const id = String(message['tool_call_id']);
      messages.push({
        role: 'tool',
        toolCallId: id,
        name: names.get(id) ?? '',
        content: content ?? '',
      });
    }
  }
  return { messages, instructions };
}

function fromResponsesInput(body: Item): { messages: Message[]; instructions: string } {
  const names = new Map<string, string>();
  const messages: Message[] = [];
  for (const item of (body['input'] ?? []) as Item[]) {
    if (item['type'] === 'message') {
      const content = String(item['content']);
      messages.push(
        item['role'] === 'assistant' ? { role: 'assistant', content } : { role: 'user', content },
      );
    } else if (item['type'] === 'function_call') {
      const call = {
        id: String(item['call_id']),
        name: String(item['name']),
        arguments: String(item['arguments']),
      };
      names.set(call.id, call.name);
      const last = messages.at(-1);
      if (last?.role === 'assistant') last.toolCalls = [...(last.toolCalls ?? []), call];
      else messages.push({ role: 'assistant', content: null, toolCalls: [call] });
    } else if (item['type'] === 'function_call_output') {
      const id = String(item['call_id']);
      messages.push({
        role: 'tool',
        toolCallId: id,
        name: names.get(id) ?? '',
        content: String(item['output']),
      });
    }
  }
  return {
    messages,
    instructions: typeof body['instructions'] === 'string' ? body['instructions'] : '',
  };
}
