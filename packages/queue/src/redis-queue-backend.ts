import { Queue, Worker } from 'bullmq';
import type { Processor, WorkerOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import {
  createRedisConnection,
  queuePrefixFor,
  ServiceUnreachableError,
  type RedisConnection,
} from '@cairn/runtime';
import type { BackendHandle, WorkerHooks } from './backend-handle.js';
import { redisClockBook } from './redis-clock-book.js';
import { openRedisLivenessProbe } from './redis-liveness-probe.js';
import { LIVENESS_RECONNECT_MS, startLivenessWatch } from './worker-liveness.js';

const PING_TIMEOUT_MS = 5000;
/** BullMQ's key prefix when none is given. */
const BULLMQ_PREFIX = 'bull';

/**
 * BullMQ on Redis through ioredis (a `Cluster` when `cluster` is set, with a
 * hash-tagged prefix); every connection it opens is closed by `close()`.
 */
export async function openRedisBackend(options: {
  url: string;
  cluster?: boolean;
  queueName: string;
  prefix?: string;
}): Promise<BackendHandle> {
  const resolved = queuePrefixFor(options.cluster ?? false, options.prefix);
  if (resolved.problem) throw new TypeError(`queue prefix ${resolved.problem}`);
  const connections: RedisConnection[] = [];
  const connect = (connectionName?: string) => {
    const redis = createRedisConnection(
      { url: options.url, cluster: options.cluster },
      {
        maxRetriesPerRequest: null,
        lazyConnect: false,
        // A named connection is a liveness connection: it comes back at once after an outage.
        ...(connectionName && { connectionName, retryStrategy: () => LIVENESS_RECONNECT_MS }),
      },
    );
    redis.on('error', () => undefined);
    connections.push(redis);
    return redis;
  };
  const main = connect();
  try {
    await withTimeout(main.ping(), PING_TIMEOUT_MS);
  } catch (cause) {
    main.disconnect();
    throw new ServiceUnreachableError('Redis', options.url, { cause });
  }
  const prefix = resolved.prefix === undefined ? {} : { prefix: resolved.prefix };
  const queue = new Queue(options.queueName, { connection: main, ...prefix });
  return {
    kind: 'redis',
    queue,
    createWorker: (
      processor: Processor,
      workerOptions: Omit<WorkerOptions, 'connection'>,
      hooks: WorkerHooks = {},
    ) => {
      const worker = new Worker(options.queueName, processor, {
        ...workerOptions,
        ...prefix,
        connection: connect(),
      });
      // `PUBSUB NUMSUB` answers for one node only: a cluster keeps lock expiry as its signal.
      if (!options.cluster && hooks.deathSignal === true)
        startLivenessWatch(
          worker,
          () => openRedisLivenessProbe(worker, (name) => connect(name) as Redis),
          hooks,
        );
      return worker;
    },
    // BullMQ's own keys are `<prefix>:<queue>:…`: the clocks beside them, in the same hash slot.
    openClockBook: async () =>
      redisClockBook(main, `${resolved.prefix ?? BULLMQ_PREFIX}:${options.queueName}`),
    close: async () => {
      await queue.close();
      for (const redis of connections) redis.disconnect();
    },
  };
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    promise.then(
      (value) => (clearTimeout(timer), resolve(value)),
      (error: unknown) => (
        clearTimeout(timer),
        reject(error instanceof Error ? error : new Error(String(error)))
      ),
    );
  });
}
