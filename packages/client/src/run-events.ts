import { CairnApiError, CairnClientError } from './errors.js';
import { segment, type HttpTransport } from './http-transport.js';
import { parseSse } from './sse-parser.js';
import type { RunStreamEvent } from './types.js';

/** Live extras a stream may carry besides stored events. */
export type EventInclude = 'deltas';

/** How the iterator reconnects after the connection drops. */
export interface ReconnectOptions {
  /**
   * Wait before the first reconnection, in ms; doubles after each failure up to `maxDelayMs`.
   * A `retry:` field from the server replaces it.
   * @defaultValue 250
   */
  initialDelayMs?: number;
  /** @defaultValue 5000 */
  maxDelayMs?: number;
  /**
   * Failed connection attempts in a row before the iterator throws.
   * @defaultValue Infinity
   */
  maxAttempts?: number;
}

/** Options of `runs.events`. */
export interface RunEventsOptions {
  /** Start after this event sequence number (0: from the first event). @defaultValue 0 */
  after?: number;
  /** `['deltas']`: also the live `ModelDelta` and `AttemptAbandoned` events, which are never stored. */
  include?: readonly EventInclude[];
  /** Stops the iteration (the iterator returns). */
  signal?: AbortSignal;
  reconnect?: ReconnectOptions;
}

/** The connection failed more times in a row than `reconnect.maxAttempts` allows. */
export class EventStreamFailed extends CairnClientError {
  constructor(
    readonly runId: string,
    readonly attempts: number,
    cause: unknown,
  ) {
    super(`event stream of run ${runId} failed ${attempts} times in a row: ${(cause as Error)?.message ?? String(cause)}`, { cause });
  }
}

/**
 * Follows `GET /v1/runs/:run_id/events` until the server ends the stream
 * (the run finished). A dropped connection (producer restart, network) is
 * reopened with `Last-Event-ID` set to the last stored event seen, so every
 * stored event is yielded once, in order, with no gap; error answers other
 * than 5xx (404, 401, ...) are thrown as typed errors.
 */
export async function* followRunEvents(
  transport: HttpTransport,
  runId: string,
  options: RunEventsOptions = {},
): AsyncGenerator<RunStreamEvent, void, undefined> {
  const path = `/v1/runs/${segment(runId)}/events${options.include?.length ? `?include=${options.include.join(',')}` : ''}`;
  const initialDelayMs = options.reconnect?.initialDelayMs ?? 250;
  const maxDelayMs = options.reconnect?.maxDelayMs ?? 5_000;
  const maxAttempts = options.reconnect?.maxAttempts ?? Infinity;
  const signal = options.signal;
  let lastSeq = options.after ?? 0;
  let failures = 0;
  let delayMs = initialDelayMs;
  while (!signal?.aborted) {
    try {
      const response = await transport.send('GET', path, {
        headers: { Accept: 'text/event-stream', ...(lastSeq > 0 ? { 'Last-Event-ID': String(lastSeq) } : {}) },
        signal,
      });
      if (!response.body) throw new CairnClientError(`GET ${path} answered without a body`);
      failures = 0;
      for await (const message of parseSse(response.body)) {
        if (message.retry !== undefined) delayMs = message.retry;
        const seq = message.id === undefined || message.id === '' ? undefined : Number(message.id);
        if (seq !== undefined) {
          // Replayed after a reconnection the server did not resume exactly: already yielded.
          if (seq <= lastSeq) continue;
          lastSeq = seq;
        }
        yield { type: message.event, seq, data: parseData(message.data) };
      }
      return;
    } catch (error) {
      if (signal?.aborted) return;
      if (error instanceof CairnApiError && error.status < 500) throw error;
      failures += 1;
      if (failures >= maxAttempts) throw new EventStreamFailed(runId, failures, error);
      await sleep(Math.min(delayMs * 2 ** (failures - 1), maxDelayMs), signal);
    }
  }
}

function parseData(data: string): Record<string, unknown> {
  if (data === '') return {};
  const parsed: unknown = JSON.parse(data);
  return parsed && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : { value: parsed };
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
  });
}
