import { DEFAULT_QUEUE_NAME, type QueueBackendKind } from '@cairn/runtime';
import type { BackendHandle } from './backend-handle.js';
import { openPostgresBackend } from './postgres-queue-backend.js';
import { openRedisBackend } from './redis-queue-backend.js';

/** Where a queue lives: the backend and its connection. */
export interface QueueConnectionOptions {
  /** @defaultValue `'redis'` when `redisUrl` is set, else `'postgres'` */
  backend?: QueueBackendKind;
  /** Redis URL (redis backend); in cluster mode one or more node URLs, comma-separated. */
  redisUrl?: string;
  /** Connect to `redisUrl` as a Redis Cluster; the prefix then defaults to `{cairn}` and must hold a hash tag. @defaultValue false */
  redisCluster?: boolean;
  /** Postgres URL (postgres backend): usually the store's own database. */
  databaseUrl?: string;
  /** @defaultValue {@link DEFAULT_QUEUE_NAME} */
  queueName?: string;
  /** Key prefix on Redis (e.g. a `{hash-tag}` for Redis Cluster), schema name on Postgres. @defaultValue BullMQ's (`bull` / `bullmq`) */
  prefix?: string;
}

/** Opens the queue `name` on the backend `options` select; throws `ServiceUnreachableError` naming Redis or Postgres. */
export async function openBackend(
  options: QueueConnectionOptions,
  name: string,
): Promise<BackendHandle> {
  const backend = options.backend ?? (options.redisUrl ? 'redis' : 'postgres');
  return backend === 'redis'
    ? openRedisBackend({
        url: required(options.redisUrl, 'redisUrl'),
        cluster: options.redisCluster,
        queueName: name,
        prefix: options.prefix,
      })
    : openPostgresBackend({
        url: required(options.databaseUrl, 'databaseUrl'),
        queueName: name,
        schema: options.prefix,
      });
}

/** The queue's name when none is given. */
export function queueNameOf(options: QueueConnectionOptions): string {
  return options.queueName ?? DEFAULT_QUEUE_NAME;
}

function required(value: string | undefined, name: string): string {
  if (!value) throw new TypeError(`RunQueue: ${name} is required for this backend`);
  return value;
}
