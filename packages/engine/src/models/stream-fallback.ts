import { ModelError } from '../errors.js';
import type { ModelRequest, ModelResponse } from '../model.js';

/**
 * Statuses of a failed streamed request that asking again without streaming
 * may cure: the server's streaming code threw (500, as a published mock
 * server's `TypeError` on tool-call turns) or is missing (501). 429 and
 * 502-504 (capacity, gateways, overload) go to the runner as they are.
 */
const STREAM_FAILURE_STATUSES: ReadonlySet<number> = new Set([500, 501]);

/** Where an adapter says, once, that it stopped streaming: pino's shape (object first, then message). */
export interface StreamFallbackLogger {
  warn(obj: object, msg?: string): void;
}

/** The logger of an adapter given none: standard error. */
const CONSOLE_LOGGER: StreamFallbackLogger = {
  warn: (obj, msg) => console.warn(msg, obj),
};

/**
 * One adapter's streaming, learnt from its server. A streamed request that
 * fails as a broken stream does is asked once more without streaming, under
 * the same call (the runner's retries and 429 handling see one answer or
 * one error): an empty answer to a turn that offers tools (a stream that
 * drops tool calls) at once; a 500 or 501 only when the adapter's previous
 * streamed request failed so too, so that a server's one-off 500 still goes
 * to the runner's retries with backoff, and a stream that fails every time
 * costs one of them. When the whole answer comes back, the server streams
 * badly: the adapter asks without streaming from then on, for the life of
 * the process, and says so once in the log. When it fails too, its error
 * says that both were tried and names `CAIRN_MODEL_STREAM=false`.
 */
export class StreamFallback {
  private streamsBadly = false;
  /** The last streamed request failed with a status in {@link STREAM_FAILURE_STATUSES}. */
  private lastStreamFailed = false;
  private readonly logger: StreamFallbackLogger;

  constructor(
    private readonly modelName: string,
    logger: StreamFallbackLogger | undefined,
  ) {
    this.logger = logger ?? CONSOLE_LOGGER;
  }

  /**
   * Answers `request`: `ask(true)` streams, `ask(false)` asks for a whole
   * answer. `wantsStream`: the turn takes deltas and the adapter may stream.
   */
  async respond(
    request: ModelRequest,
    wantsStream: boolean,
    ask: (stream: boolean) => Promise<ModelResponse>,
  ): Promise<ModelResponse> {
    if (!wantsStream || this.streamsBadly) return ask(false);
    let failure: string;
    try {
      const streamed = await ask(true);
      this.lastStreamFailed = false;
      if (!isEmptyToolTurn(streamed, request)) return streamed;
      failure = 'an empty answer (no text, no tool calls) to a turn that offers tools';
    } catch (error) {
      if (!(error instanceof ModelError) || !STREAM_FAILURE_STATUSES.has(error.status ?? 0))
        throw error;
      const again = this.lastStreamFailed;
      this.lastStreamFailed = true;
      if (!again) throw error;
      failure = `${error.message}, twice in a row`;
    }
    request.signal?.throwIfAborted();
    let whole: ModelResponse;
    try {
      whole = await ask(false);
    } catch (error) {
      throw withStreamHint(error, failure);
    }
    if (!isEmptyToolTurn(whole, request) && !this.streamsBadly) {
      this.streamsBadly = true;
      this.logger.warn(
        { model: this.modelName, streamFailure: failure },
        `model ${this.modelName}: a streamed request failed where the same request without streaming succeeded; ` +
          'asking without streaming from now on (no live text). CAIRN_MODEL_STREAM=false (stream: false on the adapter) says so from the start',
      );
    }
    return whole;
  }
}

/** An answer with neither text nor tool calls to a turn that offers tools. */
function isEmptyToolTurn(response: ModelResponse, request: ModelRequest): boolean {
  const { content, toolCalls } = response.message;
  return request.tools.length > 0 && !content && !toolCalls?.length;
}

/** The whole answer's error, saying that the streamed one failed first and naming the switch. */
function withStreamHint(error: unknown, failure: string): unknown {
  if (!(error instanceof ModelError)) return error;
  return new ModelError(
    `${error.message} (asked without streaming after the streamed request failed: ${failure}; ` +
      'if this server fails only when asked to stream, set CAIRN_MODEL_STREAM=false, or stream: false on the adapter)',
    error.retryable,
    error.status,
    { cause: error, rateLimit: error.rateLimit },
  );
}
