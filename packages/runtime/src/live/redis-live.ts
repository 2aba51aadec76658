import {
  createRedisConnection,
  type RedisConnection,
  type RedisTarget,
} from '../redis-connection.js';
import {
  ChannelListeners,
  liveChannel,
  liveMessage,
  type LiveEvent,
  type LivePublisher,
  type LiveSubscriber,
} from './live-event.js';
import { TickBatch } from './tick-batch.js';

/**
 * Live events over Redis pub/sub (the Redis backend). Events published in
 * the same tick go out as one `PUBLISH` per run's channel (one event as
 * itself, several as an array in publish order); a tick's commands are
 * answered before the next tick's go out, so a run's events keep their order.
 */
export class RedisLivePublisher implements LivePublisher {
  private readonly redis: RedisConnection;
  private readonly batch = new TickBatch((events) => this.send(events));

  constructor(
    target: RedisTarget,
    private readonly onError: (error: unknown) => void = () => undefined,
  ) {
    this.redis = createRedisConnection(target, { maxRetriesPerRequest: 1, lazyConnect: false });
    this.redis.on('error', onError);
  }

  publish(event: LiveEvent): void {
    this.batch.push(event);
  }

  async close(): Promise<void> {
    await this.batch.flushed();
    await this.redis.quit().catch(() => this.redis.disconnect());
  }

  private async send(events: readonly LiveEvent[]): Promise<void> {
    const byChannel = new Map<string, LiveEvent[]>();
    for (const event of events) {
      const channel = liveChannel(event.runId);
      const batch = byChannel.get(channel);
      if (batch) batch.push(event);
      else byChannel.set(channel, [event]);
    }
    await Promise.all(
      [...byChannel].map(([channel, batch]) =>
        this.redis.publish(channel, liveMessage(batch)).catch(this.onError),
      ),
    );
  }
}

/** Follows live channels over one Redis connection in subscriber mode. */
export class RedisLiveSubscriber implements LiveSubscriber {
  private readonly redis: RedisConnection;
  private readonly listeners = new ChannelListeners();

  constructor(target: RedisTarget) {
    this.redis = createRedisConnection(target);
    this.redis.on('error', () => undefined);
    this.redis.on('message', (channel: string, text: string) =>
      this.listeners.dispatch(channel, text),
    );
  }

  async subscribe(
    runId: string,
    listener: (event: LiveEvent) => void,
  ): Promise<() => Promise<void>> {
    const channel = liveChannel(runId);
    if (this.listeners.add(channel, listener)) await this.redis.subscribe(channel);
    return async () => {
      if (this.listeners.remove(channel, listener)) await this.redis.unsubscribe(channel);
    };
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
