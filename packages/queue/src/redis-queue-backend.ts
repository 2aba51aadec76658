import { Queue, Worker } from 'bullmq';
import type { Processor, WorkerOptions } from 'bullmq';
import { Redis } from 'ioredis';
import { ServiceUnreachableError } from './errors.js';
import type { BackendHandle } from './queue-backend.js';

const PING_TIMEOUT_MS = 5000;

/** BullMQ on Redis through ioredis; every connection it opens is closed by `close()`. */
export async function openRedisBackend(options: {
  url: string;
  queueName: string;
  prefix?: string;
}): Promise<BackendHandle> {
  const connections: Redis[] = [];
  const connect = () => {
    const redis = new Redis(options.url, { maxRetriesPerRequest: null, lazyConnect: false });
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
  const prefix = options.prefix === undefined ? {} : { prefix: options.prefix };
  const queue = new Queue(options.queueName, { connection: main, ...prefix });
  return {
    kind: 'redis',
    queue,
    createWorker: (processor: Processor, workerOptions: Omit<WorkerOptions, 'connection'>) =>
      new Worker(options.queueName, processor, { ...workerOptions, ...prefix, connection: connect() }),
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
      (error: unknown) => (clearTimeout(timer), reject(error instanceof Error ? error : new Error(String(error)))),
    );
  });
}
