import type { QueueBackendKind } from '../queue-backend-kind.js';
import type { RedisTarget } from '../redis-connection.js';
import type { LivePublisher, LiveSubscriber } from './live-event.js';
import { PostgresLivePublisher, PostgresLiveSubscriber } from './postgres-live.js';
import { RedisLivePublisher, RedisLiveSubscriber } from './redis-live.js';

/** Where the live channel runs: Redis pub/sub on the Redis backend, LISTEN/NOTIFY on the PostgreSQL one. */
export interface LiveChannelOptions {
  backend: QueueBackendKind;
  redisUrl?: string;
  /** `redisUrl` names Redis Cluster nodes. @defaultValue false */
  redisCluster?: boolean;
  databaseUrl: string;
  /** A publish that could not be sent (the run goes on). */
  onError?: (error: unknown) => void;
}

function redisTargetOf(options: LiveChannelOptions): RedisTarget {
  if (!options.redisUrl) throw new TypeError('live channel: the redis backend needs redisUrl');
  return { url: options.redisUrl, cluster: options.redisCluster };
}

/** The live publisher of the queue backend in use. */
export function createLivePublisher(options: LiveChannelOptions): LivePublisher {
  return options.backend === 'redis'
    ? new RedisLivePublisher(redisTargetOf(options), options.onError)
    : new PostgresLivePublisher(options.databaseUrl, options.onError);
}

/** The live subscriber of the queue backend in use. */
export function createLiveSubscriber(options: LiveChannelOptions): LiveSubscriber {
  return options.backend === 'redis'
    ? new RedisLiveSubscriber(redisTargetOf(options))
    : new PostgresLiveSubscriber(options.databaseUrl);
}
