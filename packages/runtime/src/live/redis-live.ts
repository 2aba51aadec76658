import {
  createRedisConnection,
  type RedisConnection,
  type RedisTarget,
} from '../redis-connection.js';
import {
  ChannelListeners,
  liveChannel,
  type LiveEvent,
  type LivePublisher,
  type LiveSubscriber,
} from './live-event.js';

/** Live events over Redis pub/sub (the Redis backend). */
export class RedisLivePublisher implements LivePublisher {
  private readonly redis: RedisConnection;

  constructor(
    target: RedisTarget,
    private readonly onError: (error: unknown) => void = () => undefined,
  ) {
    this.redis = createRedisConnection(target, { maxRetriesPerRequest: 1, lazyConnect: false });
    this.redis.on('error', onError);
  }

  publish(event: LiveEvent): void {
    this.redis.publish(liveChannel(event.runId), JSON.stringify(event)).catch(this.onError);
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
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
