import {
  FINAL_EVENT_TYPES,
  FINAL_STATUSES,
  LIVE_EVENT_TYPES,
  RunNotFoundError,
} from '@cairn/engine';
import type { LiveEvent, LiveSubscriber } from '@cairn/queue';
import type { StoredEvent } from '@cairn/store';
import { Hono } from 'hono';
import type { Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import type { SSEStreamingApi } from 'hono/streaming';
import { InvalidParameterError } from '../errors.js';
import type { ProducerClient } from '../producer-client.js';

/** Timing of the SSE event stream. */
export interface EventStreamOptions {
  /**
   * How often the store is polled for new events, in ms.
   * @defaultValue 200
   */
  pollMs?: number;
  /**
   * How often an SSE comment is sent to keep idle connections open, in ms.
   * @defaultValue 15000
   */
  heartbeatMs?: number;
  /**
   * How long to keep polling once the run is terminal but its final event has not arrived, in ms.
   * @defaultValue 2000
   */
  terminalGraceMs?: number;
}

/** What {@link eventRoutes} needs. */
export interface EventRoutesDeps {
  client: ProducerClient;
  /** The runs' live channel, for `?include=deltas`; without it such a request is a 400. */
  live?: LiveSubscriber;
  options?: EventStreamOptions;
  onStreamError?: (error: unknown, runId: string) => void;
}

/** What `?include=` may ask for: `deltas`, the live-only events (`ModelDelta`, `AttemptAbandoned`). */
const INCLUDES = ['deltas'] as const;

/**
 * `GET /v1/runs/:run_id/events`: replays the run's events after `Last-Event-ID`
 * (or `?after=`), then follows new ones until the run is terminal and its
 * events are all sent. With `?include=deltas` it also forwards the run's
 * live-only events as they are published, without an `id:` (they are never
 * stored, so a reconnection resumes after the last stored event).
 */
export function eventRoutes({ client, live, options = {}, onStreamError }: EventRoutesDeps): Hono {
  const pollMs = options.pollMs ?? 200;
  const heartbeatMs = options.heartbeatMs ?? 15_000;
  const graceMs = options.terminalGraceMs ?? 2_000;
  const app = new Hono();

  app.get('/runs/:run_id/events', async (c) => {
    const runId = c.req.param('run_id');
    let afterSeq = startSeq(c);
    const withDeltas = includes(c).includes('deltas');
    if (withDeltas && !live)
      throw new InvalidParameterError(
        'include',
        'deltas need the live channel, which this producer was started without',
      );
    if (!(await client.getRunStatus(runId))) throw new RunNotFoundError(runId);

    return streamSSE(
      c,
      async (stream) => {
        const liveEvents: LiveEvent[] = [];
        let wake: (() => void) | undefined;
        const unsubscribe = withDeltas
          ? await live!.subscribe(runId, (event) => {
              if (!(LIVE_EVENT_TYPES as readonly string[]).includes(event.type)) return;
              liveEvents.push(event);
              wake?.();
            })
          : undefined;
        stream.onAbort(() => wake?.());
        let lastType: string | undefined;
        let terminalSince: number | undefined;
        let lastWrite = Date.now();
        const sendLive = async (): Promise<void> => {
          for (const event of liveEvents.splice(0, liveEvents.length)) {
            await stream.writeSSE({ event: event.type, data: JSON.stringify(event.data) });
            lastWrite = Date.now();
          }
        };
        const send = async (events: StoredEvent[]): Promise<void> => {
          for (const event of events) {
            await stream.writeSSE({
              id: String(event.seq),
              event: event.type,
              data: JSON.stringify(event.data ?? null),
            });
            afterSeq = event.seq;
            lastType = event.type;
            lastWrite = Date.now();
          }
        };
        /** Reads new stored events; true once the run is over and all of its events are sent. */
        const poll = async (): Promise<boolean> => {
          const events = await client.listEvents(runId, afterSeq);
          await send(events);
          if (events.length > 0) return false;
          const status = await client.getRunStatus(runId);
          if (status && !FINAL_STATUSES.includes(status)) {
            terminalSince = undefined;
            return false;
          }
          const rest = await client.listEvents(runId, afterSeq);
          await send(rest);
          terminalSince ??= Date.now();
          const finalSeen = lastType !== undefined && FINAL_EVENT_TYPES.includes(lastType);
          return rest.length === 0 && (finalSeen || Date.now() - terminalSince >= graceMs);
        };
        try {
          let nextPollAt = 0;
          while (!stream.aborted) {
            await sendLive();
            if (Date.now() >= nextPollAt) {
              if (await poll()) break;
              nextPollAt = Date.now() + pollMs;
            }
            if (Date.now() - lastWrite >= heartbeatMs)
              await heartbeat(stream, () => (lastWrite = Date.now()));
            // Sleeps until the next poll; a live event wakes it early, so deltas go out as they come.
            if (liveEvents.length === 0) {
              await new Promise<void>((resolve) => {
                const timer = setTimeout(done, Math.max(0, nextPollAt - Date.now()));
                wake = done;
                function done() {
                  clearTimeout(timer);
                  wake = undefined;
                  resolve();
                }
              });
            }
          }
        } finally {
          await unsubscribe?.();
        }
      },
      async (error) => {
        onStreamError?.(error, runId);
      },
    );
  });

  return app;
}

async function heartbeat(stream: SSEStreamingApi, written: () => void): Promise<void> {
  await stream.write(': heartbeat\n\n');
  written();
}

function includes(c: Context): (typeof INCLUDES)[number][] {
  const raw = c.req.query('include');
  if (raw === undefined || raw.trim() === '') return [];
  const values = raw.split(',').map((v) => v.trim());
  const unknown = values.find((v) => !(INCLUDES as readonly string[]).includes(v));
  if (unknown !== undefined)
    throw new InvalidParameterError(
      'include',
      `unknown value "${unknown}": expected ${INCLUDES.join(', ')}`,
    );
  return values as (typeof INCLUDES)[number][];
}

function startSeq(c: Context): number {
  const header = c.req.header('Last-Event-ID');
  const [name, raw] =
    header !== undefined ? ['Last-Event-ID', header] : ['after', c.req.query('after')];
  if (raw === undefined || raw.trim() === '') return 0;
  const value = Number(raw);
  if (!/^\s*\d+\s*$/.test(raw) || !Number.isSafeInteger(value)) {
    throw new InvalidParameterError(name, 'must be a non-negative integer event sequence number');
  }
  return value;
}
