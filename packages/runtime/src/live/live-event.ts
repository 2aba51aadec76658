/**
 * The live channel of a run: events published as they happen and never
 * stored (model text deltas, progress no checkpoint covers yet, stored events
 * before their commit). A subscriber that misses one reads the stored stream.
 */

/** One event on a run's live channel. Engine `RunEvent`s fit this shape; so do `ModelDelta`s. */
export interface LiveEvent {
  type: string;
  runId: string;
  /** Epoch of the execution that published it. */
  epoch: number;
  data: Record<string, unknown>;
  /** ISO time it was published. */
  at: string;
}

/** Publishes live events. Fire and forget: never blocks or fails the run that publishes. */
export interface LivePublisher {
  publish(event: LiveEvent): void;
  /** Sends what is buffered and releases the connection. */
  close(): Promise<void>;
}

/** Follows runs' live channels. */
export interface LiveSubscriber {
  /** Calls `listener` for each event published on the run's channel from now on; resolves once listening. Returns the unsubscribe. */
  subscribe(runId: string, listener: (event: LiveEvent) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

/** The channel name of a run (a Redis channel, or a Postgres NOTIFY channel, at most 63 bytes). */
export function liveChannel(runId: string): string {
  return `cairn_run_${runId}`;
}

/** A publisher that drops everything (embedding without a live channel). */
export const SILENT_PUBLISHER: LivePublisher = {
  publish: () => undefined,
  close: () => Promise.resolve(),
};

/** A live channel message: one event as itself, several (a tick's worth, in publish order) as an array. */
export function liveMessage(events: readonly LiveEvent[]): string {
  return JSON.stringify(events.length === 1 ? events[0] : events);
}

const isLiveEvent = (value: unknown): value is LiveEvent =>
  typeof (value as Partial<LiveEvent> | null)?.type === 'string' &&
  typeof (value as Partial<LiveEvent>).runId === 'string';

/** The live events in a message received on a live channel (one event, or an array of them), in order; what is not an event is skipped. */
function parseLiveMessage(text: string): LiveEvent[] {
  try {
    const value: unknown = JSON.parse(text);
    return (Array.isArray(value) ? value : [value]).filter(isLiveEvent);
  } catch {
    return [];
  }
}

/** A subscriber's listeners by channel: tells when to (un)subscribe the connection, and dispatches messages. */
export class ChannelListeners {
  private readonly byChannel = new Map<string, Set<(event: LiveEvent) => void>>();

  /** Adds `listener`; true when it is the channel's first (subscribe the connection). */
  add(channel: string, listener: (event: LiveEvent) => void): boolean {
    const set = this.byChannel.get(channel) ?? new Set();
    this.byChannel.set(channel, set);
    set.add(listener);
    return set.size === 1;
  }

  /** Removes `listener`; true when the channel has none left (unsubscribe the connection). */
  remove(channel: string, listener: (event: LiveEvent) => void): boolean {
    const set = this.byChannel.get(channel);
    if (!set?.delete(listener) || set.size > 0) return false;
    this.byChannel.delete(channel);
    return true;
  }

  /** Hands a message received on `channel` to its listeners. */
  dispatch(channel: string, text: string | undefined): void {
    if (text === undefined) return;
    const listeners = this.byChannel.get(channel);
    if (listeners)
      for (const event of parseLiveMessage(text)) for (const listener of listeners) listener(event);
  }
}
