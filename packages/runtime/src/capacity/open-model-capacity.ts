import type { ModelCapacity } from '@cairn/engine';
import type { StoreOps } from '@cairn/store';
import type { QueueBackendKind } from '../queue-backend-kind.js';
import { createRedisConnection } from '../redis-connection.js';
import { RedisModelCapacity } from './redis-model-capacity.js';

/** Where the fleet's model capacity lives: beside the queue, on its Redis or on Postgres. */
export interface ModelCapacityTarget {
  backend: QueueBackendKind;
  redisUrl?: string;
  /** `CAIRN_REDIS_CLUSTER`. @defaultValue false */
  redisCluster?: boolean;
  /** `CAIRN_QUEUE_PREFIX` (hash-tagged in cluster mode, so the limiter's keys share the queue's slot). */
  queuePrefix?: string;
  queueName: string;
  /** The store's operations part (the PostgreSQL backend's limiter keeps its state in its database). */
  store: Pick<StoreOps, 'modelCapacity'>;
}

/** An open limiter and what closes it. */
export interface OpenModelCapacity {
  capacity: ModelCapacity;
  close(): Promise<void>;
}

/**
 * Opens the fleet's model limiter where the queue runs: on its Redis, under
 * the queue's prefix (`{cairn}:runs:cap:...` in cluster mode), with a
 * connection of its own and one for the 429 notices (opened at the first
 * permit for a model with no configured limit); on Postgres (the store's
 * database) with the PostgreSQL backend.
 */
export function openModelCapacity(target: ModelCapacityTarget): OpenModelCapacity {
  if (target.backend === 'postgres') {
    return { capacity: target.store.modelCapacity, close: async () => undefined };
  }
  if (!target.redisUrl) throw new TypeError('model capacity: the redis backend needs redisUrl');
  const redisTarget = { url: target.redisUrl, cluster: target.redisCluster };
  const redis = createRedisConnection(redisTarget);
  const subscriber = createRedisConnection(redisTarget, { lazyConnect: true });
  const prefix = `${target.queuePrefix ?? 'bull'}:${target.queueName}`;
  return {
    capacity: new RedisModelCapacity(redis, { prefix, subscriber }),
    close: async () => {
      // The subscriber has nothing to flush (and may never have connected).
      subscriber.disconnect();
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
