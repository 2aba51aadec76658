import { CairnApiError, CairnClientError, TooManyRequests } from './errors.js';
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
  /**
   * Start after this point: an event's `cursor` (resumes right after that
   * event), or the run's own event sequence number (a team's member events
   * then start from their first). 0: from the first event.
   * @defaultValue 0
   */
  after?: number | string;
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
    super(
      `event stream of run ${runId} failed ${attempts} times in a row: ${(cause as Error)?.message ?? String(cause)}`,
      { cause },
    );
  }
}

/**
 * Follows `GET /v1/runs/:run_id/events` until the server ends the stream
 * (the run finished). A dropped connection (producer restart, network) is
 * reopened with `Last-Event-ID` set to the cursor of the last stored event
 * seen, so every stored event (a team's members' included) is yielded once,
 * in order, with no gap. A 429 (the key already holds as many open streams
 * as the producer allows) is retried after its `Retry-After`; other error
 * answers below 500 (404, 401, ...) are thrown as typed errors.
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
  /** The cursor of the last stored event yielded (or `after`): where a (re)connection resumes. */
  let last = String(options.after ?? 0);
  let failures = 0;
  let delayMs = initialDelayMs;
  while (!signal?.aborted) {
    try {
      const resumedFrom = positionOf(last) ?? new Map<string, number>();
      const response = await transport.send('GET', path, {
        headers: {
          Accept: 'text/event-stream',
          ...(last !== '0' && last !== '' ? { 'Last-Event-ID': last } : {}),
        },
        signal,
      });
      if (!response.body) throw new CairnClientError(`GET ${path} answered without a body`);
      failures = 0;
      for await (const message of parseSse(response.body)) {
        if (message.retry !== undefined) delayMs = message.retry;
        const cursor = message.id === undefined || message.id === '' ? undefined : message.id;
        const position = cursor === undefined ? undefined : positionOf(cursor);
        if (cursor !== undefined) {
          // Replayed after a reconnection the server did not resume exactly: covered by the cursor it was sent.
          if (position && coveredBy(position, resumedFrom)) continue;
          last = cursor;
        }
        yield streamEvent(message.event, cursor, position, parseData(message.data));
      }
      return;
    } catch (error) {
      if (signal?.aborted) return;
      // A 429 (this key holds as many streams as it may) is worth waiting out; any other 4xx is final.
      const waitsOut = error instanceof TooManyRequests;
      if (error instanceof CairnApiError && error.status < 500 && !waitsOut) throw error;
      failures += 1;
      if (failures >= maxAttempts) throw new EventStreamFailed(runId, failures, error);
      const backoffMs = Math.min(delayMs * 2 ** (failures - 1), maxDelayMs);
      await sleep(waitsOut ? (error.retryAfterMs ?? backoffMs) : backoffMs, signal);
    }
  }
}

/**
 * The last seq seen of the run and of each of its member runs, as a cursor
 * holds them (`7.3f2a9c1eab12-4`: the run's own, then `.<member key>-<seq>`),
 * keyed `''` for the run's own.
 */
type StreamPosition = Map<string, number>;

function positionOf(cursor: string): StreamPosition | undefined {
  const [own, ...members] = cursor.split('.');
  const position: StreamPosition = new Map([['', Number(own)]]);
  for (const member of members) {
    const [key, seq] = member.split('-');
    if (!key || seq === undefined) return undefined;
    position.set(key, Number(seq));
  }
  return [...position.values()].every((seq) => Number.isSafeInteger(seq) && seq >= 0)
    ? position
    : undefined;
}

/** True when every run's seq in `position` is at most `resumedFrom`'s (a run missing there is at 0). */
function coveredBy(position: StreamPosition, resumedFrom: StreamPosition): boolean {
  return [...position].every(([key, seq]) => seq <= (resumedFrom.get(key) ?? 0));
}

function streamEvent(
  type: string,
  cursor: string | undefined,
  position: StreamPosition | undefined,
  data: Record<string, unknown>,
): RunStreamEvent {
  const member =
    typeof data.run_id === 'string' && Array.isArray(data.member_path)
      ? { runId: data.run_id, path: data.member_path as string[] }
      : undefined;
  if (cursor === undefined) return { type, seq: undefined, cursor, member, data };
  const seq = member && typeof data.member_seq === 'number' ? data.member_seq : position?.get('');
  return { type, seq, cursor, member, data };
}

function parseData(data: string): Record<string, unknown> {
  if (data === '') return {};
  const parsed: unknown = JSON.parse(data);
  return parsed && typeof parsed === 'object'
    ? (parsed as Record<string, unknown>)
    : { value: parsed };
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
