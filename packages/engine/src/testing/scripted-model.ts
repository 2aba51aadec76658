import { randomUUID } from 'node:crypto';
import type { AssistantMessage, Message, Usage } from '../messages.js';
import type { Model, ModelRequest, ModelResponse, ToolSpec } from '../model.js';
import { abortableSleep } from '../runner/abortable-sleep.js';

/** What a script sees: the request and the number of model turns already in the history. */
export interface ScriptContext {
  messages: readonly Message[];
  instructions: string;
  tools: readonly ToolSpec[];
  /** Assistant turns already in `messages`. */
  turn: number;
}

/** A scripted turn: a final answer, or tool calls (with optional text). */
export type ScriptedReply =
  | { text: string }
  | { toolCalls: { name: string; arguments: Record<string, unknown> | string }[]; text?: string };

/** Options of {@link ScriptedModel}. */
export interface ScriptedModelOptions {
  /** @defaultValue 'scripted' */
  name?: string;
  /** Decides the next turn from the request alone, so a resumed run replays identically. */
  decide(context: ScriptContext): ScriptedReply;
  /** Simulated latency of each turn. @defaultValue 0 */
  latencyMs?: number;
  /**
   * `derived`: tool-call ids from the turn number, the same on every replay.
   * `fresh`: new random ids on every request, as a real API returns them, so
   * a turn re-issued after a crash gets new ids (and new idempotency keys).
   * @defaultValue 'derived'
   */
  toolCallIds?: 'derived' | 'fresh';
}

/**
 * A scripted model for tests and the offline demo: its replies depend on the
 * messages alone. Tool call ids are derived from the turn number (the same
 * history always yields the same ids) or, with `toolCallIds: 'fresh'`, new on
 * every request like a real model's.
 */
export class ScriptedModel implements Model {
  readonly name: string;

  constructor(private readonly options: ScriptedModelOptions) {
    this.name = options.name ?? 'scripted';
  }

  async respond(request: ModelRequest): Promise<ModelResponse> {
    const turn = request.messages.filter((m) => m.role === 'assistant').length;
    const reply = this.options.decide({
      messages: request.messages,
      instructions: request.instructions,
      tools: request.tools,
      turn,
    });
    const message: AssistantMessage =
      'toolCalls' in reply
        ? {
            role: 'assistant',
            content: reply.text ?? null,
            toolCalls: reply.toolCalls.map((call, index) => ({
              id:
                this.options.toolCallIds === 'fresh'
                  ? `call_${randomUUID()}`
                  : `call_${turn + 1}_${index + 1}`,
              name: call.name,
              arguments:
                typeof call.arguments === 'string'
                  ? call.arguments
                  : JSON.stringify(call.arguments),
            })),
          }
        : { role: 'assistant', content: reply.text };
    await this.deliver(message, request);
    return { message, usage: estimateUsage(request.messages, message) };
  }

  /** Takes the turn's latency; with `onDelta`, spreads the text (word by word) and the tool calls over it, as a streaming model does. */
  private async deliver(message: AssistantMessage, request: ModelRequest): Promise<void> {
    const latencyMs = this.options.latencyMs ?? 0;
    const words = message.content?.match(/\S+\s*|\s+/g) ?? [];
    const calls = message.toolCalls ?? [];
    const steps = request.onDelta ? words.length + calls.length : 0;
    const pause = latencyMs / (steps + 1);
    for (const text of words) {
      if (!request.onDelta) break;
      if (pause > 0) await abortableSleep(pause, request.signal);
      request.onDelta({ kind: 'text', text });
    }
    for (const [index, call] of calls.entries()) {
      if (!request.onDelta) break;
      if (pause > 0) await abortableSleep(pause, request.signal);
      request.onDelta({ kind: 'tool-call', index, name: call.name, arguments: call.arguments });
    }
    if (pause > 0) await abortableSleep(pause, request.signal);
    request.signal?.throwIfAborted();
  }
}

function estimateUsage(messages: readonly Message[], reply: AssistantMessage): Usage {
  const inputTokens = Math.ceil(JSON.stringify(messages).length / 4);
  const outputTokens = Math.ceil(JSON.stringify(reply).length / 4);
  return { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens };
}

/** The tool results in a history, oldest first. */
export function toolResults(messages: readonly Message[], name?: string) {
  return messages.flatMap((m) => (m.role === 'tool' && (!name || m.name === name) ? [m] : []));
}

/** The first user message's text (a run's input). */
export function firstUserInput(messages: readonly Message[]): string {
  const first = messages.find((m) => m.role === 'user');
  return first?.role === 'user' ? first.content : '';
}
