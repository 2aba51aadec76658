import {
  FINAL_EVENT_TYPES,
  FINAL_STATUSES,
  LIVE_EVENT_TYPES,
  RunNotFoundError,
} from '@cairn/engine';
import type { LiveEvent, LiveSubscriber } from '@cairn/runtime';
import type { RunTreeNode, StoredEvent } from '@cairn/store';
import { Hono } from 'hono';
import type { Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import type { SSEStreamingApi } from 'hono/streaming';
import { getConnInfo } from '@hono/node-server/conninfo';
import type { Principal } from '../api-keys.js';
import { InvalidParameterError, TooManyStreamsError } from '../errors.js';
import { describeRange, STORED_INDEX } from '../integer-parameter.js';
import type { ProducerClient } from '../producer-client.js';
import { StreamSlots } from '../stream-slots.js';
import { parseEventCursor, TreeStreamPosition, type EventCursor } from './event-cursor.js';

/** Default most event streams one API key (with auth off: one client address) may hold open at once. */
export const DEFAULT_MAX_STREAMS_PER_KEY = 32;

/** What a refused stream's `Retry-After` says, in seconds. */
const STREAM_RETRY_AFTER_S = 5;

/** Timing and limits of the SSE event stream. */
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
  /**
   * Most streams one API key may hold open at once (`CAIRN_MAX_STREAMS_PER_KEY`);
   * with auth off, one client address. One more is a 429 with `Retry-After`.
   * @defaultValue {@link DEFAULT_MAX_STREAMS_PER_KEY}
   */
  maxStreamsPerKey?: number;
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
 * `GET /v1/runs/:run_id/events`: replays the events of the run and of every
 * member run below it after `Last-Event-ID` (or `?after=`), then follows new
 * ones until the run is terminal and its tree's events are all sent. A member
 * run's event carries `run_id`, `member_path` and `member_seq` in its data;
 * each event's `id` is the stream's cursor after it ({@link EventCursor}: the
 * integer seq for a run without member runs). With `?include=deltas` it also
 * forwards the tree's live-only events as they are published, without an
 * `id:` (they are never stored, so a reconnection resumes after the last
 * stored event); a member's are marked the same way. A key holds at most
 * `maxStreamsPerKey` streams at once: its slot frees when the stream ends or
 * the client disconnects.
 */
export function eventRoutes({ client, live, options = {}, onStreamError }: EventRoutesDeps): Hono {
  const pollMs = options.pollMs ?? 200;
  const heartbeatMs = options.heartbeatMs ?? 15_000;
  const graceMs = options.terminalGraceMs ?? 2_000;
  const slots = new StreamSlots(options.maxStreamsPerKey ?? DEFAULT_MAX_STREAMS_PER_KEY);
  const app = new Hono();

  app.get('/runs/:run_id/events', async (c) => {
    const runId = c.req.param('run_id');
    const cursor = startCursor(c);
    const withDeltas = includes(c).includes('deltas');
    if (withDeltas && !live)
      throw new InvalidParameterError(
        'include',
        'deltas need the live channel, which this producer was started without',
      );
    if (!(await client.getRunStatus(runId))) throw new RunNotFoundError(runId);
    const holder = streamHolder(c);
    const release = slots.take(holder.id);
    if (!release)
      throw new TooManyStreamsError(holder.kind, slots.maxPerHolder, STREAM_RETRY_AFTER_S);

    return streamSSE(
      c,
      async (stream) => {
        const liveEvents: { event: LiveEvent; member: MemberFields | undefined }[] = [];
        let wake: (() => void) | undefined;
        const unsubscribes: (() => Promise<void>)[] = [];
        const followed = new Set<string>();
        /** Forwards the run's live-only events from now on (members: once a poll finds them). */
        const followLive = async (
          liveRunId: string,
          member: MemberFields | undefined,
        ): Promise<void> => {
          if (!withDeltas || followed.has(liveRunId)) return;
          followed.add(liveRunId);
          unsubscribes.push(
            await live!.subscribe(liveRunId, (event) => {
              if (!(LIVE_EVENT_TYPES as readonly string[]).includes(event.type)) return;
              liveEvents.push({ event, member });
              wake?.();
            }),
          );
        };
        stream.onAbort(() => wake?.());
        const position = new TreeStreamPosition(runId, cursor);
        let lastRootType: string | undefined;
        let terminalSince: number | undefined;
        let lastWrite = Date.now();
        const sendLive = async (): Promise<void> => {
          for (const { event, member } of liveEvents.splice(0, liveEvents.length)) {
            await stream.writeSSE({
              event: event.type,
              data: JSON.stringify(member ? { ...event.data, ...member } : event.data),
            });
            lastWrite = Date.now();
          }
        };
        const send = async (events: StoredEvent[]): Promise<void> => {
          for (const event of events) {
            const { run, root } = position.runOf(event.runId);
            const data = root
              ? (event.data ?? null)
              : {
                  ...(event.data as Record<string, unknown>),
                  ...memberFields(run),
                  member_seq: event.seq,
                };
            await stream.writeSSE({
              id: position.advance(event.runId, event.seq),
              event: event.type,
              data: JSON.stringify(data),
            });
            if (root) lastRootType = event.type;
            lastWrite = Date.now();
          }
        };
        /** Reads the tree's new stored events; true once the run is over and all of its tree's events are sent. */
        const poll = async (): Promise<boolean> => {
          const read = await client.readRunTreeEvents(runId, position.after);
          if (!read) return true;
          position.adopt(read.runs);
          for (const [i, run] of read.runs.entries())
            await followLive(run.runId, i === 0 ? undefined : memberFields(run));
          await send(read.events);
          if (read.events.length > 0) return false;
          // The root's status was read before its events: once it is final, nothing is stored after what was read.
          if (!FINAL_STATUSES.includes(read.runs[0]!.status)) {
            terminalSince = undefined;
            return false;
          }
          terminalSince ??= Date.now();
          const finalSeen = lastRootType !== undefined && FINAL_EVENT_TYPES.includes(lastRootType);
          return finalSeen || Date.now() - terminalSince >= graceMs;
        };
        try {
          // The run's own live channel first, so no delta published once the stream is open is missed.
          await followLive(runId, undefined);
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
          release();
          await Promise.all(unsubscribes.map((unsubscribe) => unsubscribe()));
        }
      },
      async (error) => {
        onStreamError?.(error, runId);
      },
    );
  });

  return app;
}

/** Whose slots a stream takes: its API key's (a browser session's too), or with auth off its client address's. */
function streamHolder(c: Context): { id: string; kind: 'API key' | 'client address' } {
  const principal = c.get('principal') as Principal | undefined;
  if (principal) return { id: `key:${principal.keyId}`, kind: 'API key' };
  let address: string | undefined;
  try {
    address = getConnInfo(c).remote.address;
  } catch {
    // No socket (an in-process `app.request`): every such request shares one holder.
  }
  return { id: `address:${address ?? 'unknown'}`, kind: 'client address' };
}

/** What marks a member run's event in its team's stream. */
interface MemberFields {
  run_id: string;
  member_path: string[];
}

function memberFields(run: RunTreeNode): MemberFields {
  return { run_id: run.runId, member_path: run.memberPath };
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

function startCursor(c: Context): EventCursor {
  const header = c.req.header('Last-Event-ID');
  const [name, raw] =
    header !== undefined ? ['Last-Event-ID', header] : ['after', c.req.query('after')];
  const cursor = parseEventCursor(raw ?? '');
  if (!cursor)
    throw new InvalidParameterError(
      name,
      `must be an event id of this stream: an event sequence number (${describeRange(STORED_INDEX)}), then \`.<member key>-<seq>\` per member run`,
    );
  return cursor;
}
