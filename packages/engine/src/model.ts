import type { AssistantMessage, Message, Usage } from './messages.js';

/** A tool as a model sees it: name, description and JSON Schema of its arguments. */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/** A piece of a model's answer as it streams: text, or a fragment of a tool call's JSON arguments. */
export type ModelStreamDelta =
  | { kind: 'text'; text: string }
  | { kind: 'tool-call'; index: number; name?: string; arguments: string };

/** Everything a model needs for one turn. */
export interface ModelRequest {
  /** System instructions for this entity. */
  instructions: string;
  messages: readonly Message[];
  tools: readonly ToolSpec[];
  signal?: AbortSignal;
  /**
   * When set, the model streams: each piece of the answer is handed here as
   * it arrives, and `respond` still resolves with the complete answer.
   * Models that cannot stream ignore it and answer at once.
   */
  onDelta?: (delta: ModelStreamDelta) => void;
}

/** One model turn's answer. */
export interface ModelResponse {
  message: AssistantMessage;
  usage?: Usage;
  /** The model that answered, as the provider names it (often a dated snapshot of the one asked for). */
  responseModel?: string;
  /**
   * Why the model stopped, in the provider's words (`stop`, `tool_calls`,
   * `length`, `content_filter`); absent when the provider said nothing.
   */
  finishReason?: string;
}

/**
 * A language model. Adapters throw {@link ModelError} with `retryable` set for
 * transient failures (429, 5xx, timeouts, connection resets).
 */
export interface Model {
  /** A label for logs and events, e.g. `openai:gpt-5.4`. */
  readonly name: string;
  respond(request: ModelRequest): Promise<ModelResponse>;
}
