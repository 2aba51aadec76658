import type { QueueBackendKind } from '../queue-backend.js';
import type { LivePublisher, LiveSubscriber } from './live-event.js';
import { PostgresLivePublisher, PostgresLiveSubscriber } from './postgres-live.js';
import { RedisLivePublisher, RedisLiveSubscriber } from './redis-live.js';

/** Where the live channel runs: Redis pub/sub on the Redis backend, LISTEN/NOTIFY on the PostgreSQL one. */
export interface LiveChannelOptions {
  backend: QueueBackendKind;
  redisUrl?: string;
  databaseUrl: string;
  /** A publish that could not be sent (the run goes on). */
  onError?: (error: unknown) => void;
}

function redisUrlOf(options: LiveChannelOptions): string {
  if (!options.redisUrl) throw new TypeError('live channel: the redis backend needs redisUrl');
  return options.redisUrl;
}

/** The live publisher of the queue backend in use. */
export function createLivePublisher(options: LiveChannelOptions): LivePublisher {
  return options.backend === 'redis'
    ? new RedisLivePublisher(redisUrlOf(options), options.onError)
    : new PostgresLivePublisher(options.databaseUrl, options.onError);
}

/** The live subscriber of the queue backend in use. */
export function createLiveSubscriber(options: LiveChannelOptions): LiveSubscriber {
  return options.backend === 'redis' ? new RedisLiveSubscriber(redisUrlOf(options)) : new PostgresLiveSubscriber(options.databaseUrl);
}
