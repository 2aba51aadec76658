import { FINAL_EVENT_TYPES, FINAL_STATUSES, RunNotFoundError } from '@cairn/engine';
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
  options?: EventStreamOptions;
  onStreamError?: (error: unknown, runId: string) => void;
}

/**
 * `GET /v1/runs/:run_id/events`: replays the run's events after `Last-Event-ID`
 * (or `?after=`), then follows new ones until the run is terminal and its
 * events are all sent.
 */
export function eventRoutes({ client, options = {}, onStreamError }: EventRoutesDeps): Hono {
  const pollMs = options.pollMs ?? 200;
  const heartbeatMs = options.heartbeatMs ?? 15_000;
  const graceMs = options.terminalGraceMs ?? 2_000;
  const app = new Hono();

  app.get('/runs/:run_id/events', async (c) => {
    const runId = c.req.param('run_id');
    let afterSeq = startSeq(c);
    if (!(await client.getRunStatus(runId))) throw new RunNotFoundError(runId);

    return streamSSE(
      c,
      async (stream) => {
        let lastType: string | undefined;
        let terminalSince: number | undefined;
        let lastWrite = Date.now();
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
        while (!stream.aborted) {
          const events = await client.listEvents(runId, afterSeq);
          await send(events);
          if (events.length === 0) {
            const status = await client.getRunStatus(runId);
            if (!status || FINAL_STATUSES.includes(status)) {
              const rest = await client.listEvents(runId, afterSeq);
              await send(rest);
              terminalSince ??= Date.now();
              const finalSeen = lastType !== undefined && FINAL_EVENT_TYPES.includes(lastType);
              if (rest.length === 0 && (finalSeen || Date.now() - terminalSince >= graceMs)) break;
            } else {
              terminalSince = undefined;
            }
          }
          if (Date.now() - lastWrite >= heartbeatMs)
            await heartbeat(stream, () => (lastWrite = Date.now()));
          await stream.sleep(pollMs);
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
