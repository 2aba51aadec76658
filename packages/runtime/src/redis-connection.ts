import { Cluster, Redis, type RedisOptions } from 'ioredis';

/** Where Cairn's Redis is: one server, or the seed nodes of a Redis Cluster. */
export interface RedisTarget {
  /** `redis://host:port`; in cluster mode one or more such URLs, comma-separated (the seed nodes). */
  url: string;
  /** `CAIRN_REDIS_CLUSTER=1`: connect as an ioredis `Cluster`. @defaultValue false */
  cluster?: boolean;
}

/** A connection to a single Redis or to a Redis Cluster (BullMQ and pub/sub take either). */
export type RedisConnection = Redis | Cluster;

/** The queue prefix of cluster mode when none is configured: a hash tag, so every key of a queue lands in one slot. */
export const DEFAULT_CLUSTER_QUEUE_PREFIX = '{cairn}';

/** The URLs of a `REDIS_URL` value (comma-separated, blanks dropped). */
export function redisUrlsOf(url: string): string[] {
  return url
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean);
}

/**
 * The queue prefix to use, or a problem (a sentence) when it cannot work: in
 * cluster mode the prefix must hold a `{hash tag}` (BullMQ's Redis Cluster
 * guidance: its scripts touch several keys of a queue at once), and
 * defaults to {@link DEFAULT_CLUSTER_QUEUE_PREFIX}.
 */
export function queuePrefixFor(
  cluster: boolean,
  prefix: string | undefined,
): { prefix?: string; problem?: string } {
  if (!cluster) return { prefix };
  if (prefix === undefined) return { prefix: DEFAULT_CLUSTER_QUEUE_PREFIX };
  if (!/\{[^{}]+\}/.test(prefix)) {
    return {
      problem: `must hold a hash tag in braces in cluster mode (e.g. "${DEFAULT_CLUSTER_QUEUE_PREFIX}"), got "${prefix}"`,
    };
  }
  return { prefix };
}

/**
 * Opens a Redis connection to `target` with `options`: a `Redis` for one
 * server, a `Cluster` seeded with every URL of `target.url` in cluster mode
 * (the options then apply to each node's connection; credentials come from
 * the first URL). The one place Cairn makes a Redis connection.
 */
export function createRedisConnection(
  target: RedisTarget,
  options: RedisOptions = {},
): RedisConnection {
  const urls = redisUrlsOf(target.url);
  if (!target.cluster) {
    if (urls.length !== 1)
      throw new TypeError(
        `REDIS_URL: names ${urls.length} servers; several need CAIRN_REDIS_CLUSTER=1`,
      );
    return new Redis(urls[0]!, options);
  }
  const nodes = urls.map((url) => {
    const parsed = new URL(url);
    return { host: parsed.hostname, port: Number(parsed.port || 6379) };
  });
  const first = new URL(urls[0]!);
  const credentials = {
    ...(first.username && { username: decodeURIComponent(first.username) }),
    ...(first.password && { password: decodeURIComponent(first.password) }),
    ...(first.protocol === 'rediss:' && { tls: {} }),
  };
  const { lazyConnect, ...nodeOptions } = options;
  return new Cluster(nodes, {
    redisOptions: { ...credentials, ...nodeOptions },
    ...(lazyConnect !== undefined && { lazyConnect }),
  });
}
