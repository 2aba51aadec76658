/** One tool call a scripted reply makes; `arguments` objects are sent as JSON text. */
export interface FakeToolCall {
  /** The call id (`call_...`) the model gives; generated when omitted. */
  id?: string;
  name: string;
  arguments: Record<string, unknown> | string;
}

/** Token counts a scripted reply reports; computed from the bodies when omitted. */
export interface FakeUsage {
  input: number;
  output: number;
  /** The part of `input` served from the prompt cache (`cached_tokens`). @defaultValue 0 */
  cached?: number;
}

/** What the fake server answers to the next model request. */
export type FakeOpenAIReply =
  | { kind: 'text'; text: string; usage?: FakeUsage }
  | { kind: 'tool_calls'; calls: FakeToolCall[]; usage?: FakeUsage }
  | { kind: 'error'; status: number; message: string; type?: string; code?: string | null }
  | { kind: 'hang' }
  | { kind: 'malformed' }
  /** Any status and body, sent as given: a gateway's HTML page, a truncated body. */
  | { kind: 'raw'; status: number; contentType: string; body: string };
