import OpenAI from 'openai';
import type { StreamFallbackLogger } from './stream-fallback.js';

/** Options of the OpenAI adapters ({@link OpenAIResponsesModel}, {@link OpenAIChatModel}). */
export interface OpenAIModelOptions {
  /** Model id sent to the server, e.g. `gpt-5.4` or `qwen3:8b`. */
  model: string;
  /**
   * API key, ignored when `client` is given.
   * @defaultValue `process.env.OPENAI_API_KEY` (read by the openai client)
   */
  apiKey?: string;
  /**
   * Base URL of the API (ending in `/v1`), ignored when `client` is given.
   * @defaultValue `process.env.OPENAI_BASE_URL`, else `https://api.openai.com/v1`
   */
  baseURL?: string;
  /** A ready client to use instead of building one; its own retries are disabled per request. */
  client?: OpenAI;
  /**
   * Time limit of one request in milliseconds; past it the call fails with a retryable {@link ModelError}.
   * @defaultValue the client's timeout (10 minutes)
   */
  timeoutMs?: number;
  /**
   * Sampling temperature; omitted from requests when unset (some models reject it).
   * @defaultValue the server's default
   */
  temperature?: number;
  /**
   * Whether a turn that takes live deltas asks the server to stream
   * (`stream: true`). `false` for a server whose stream drops what its whole
   * answers carry (tool calls); a server that answers `stream: true` with a
   * whole JSON body works either way, without live deltas.
   * A streamed turn that fails as only a broken stream does (a 500 or 501,
   * or an empty answer to a turn that offers tools) is asked again without
   * streaming; if that works, the adapter stops streaming for good and says
   * so once to `logger` (see `StreamFallback`).
   * @defaultValue true
   */
  stream?: boolean;
  /**
   * Where the adapter warns, once, that it stopped streaming for a server that streams badly.
   * @defaultValue standard error
   */
  logger?: StreamFallbackLogger;
}

/** Builds the adapter's client with the openai client's retries off: retrying is the engine's job. */
export function createOpenAIClient(options: OpenAIModelOptions): OpenAI {
  return (
    options.client ??
    new OpenAI({
      ...(options.apiKey === undefined ? {} : { apiKey: options.apiKey }),
      ...(options.baseURL === undefined ? {} : { baseURL: options.baseURL }),
      maxRetries: 0,
    })
  );
}

/** Per-request options: exactly one HTTP attempt, our timeout, our abort signal. */
export function openAIRequestOptions(
  options: OpenAIModelOptions,
  signal: AbortSignal | undefined,
): OpenAI.RequestOptions {
  return {
    maxRetries: 0,
    ...(options.timeoutMs === undefined ? {} : { timeout: options.timeoutMs }),
    ...(signal === undefined ? {} : { signal }),
  };
}
