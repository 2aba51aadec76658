import { createPostgresBackend, withBackend } from 'bullmq';
import type { Processor, WorkerOptions } from 'bullmq';
import { ServiceUnreachableError } from '@cairn/runtime';
import type { AnyQueue, AnyWorker, BackendHandle } from './backend-handle.js';

/** BullMQ's own PostgreSQL backend; its tables live in `schema` and are migrated on connect. */
export async function openPostgresBackend(options: {
  url: string;
  queueName: string;
  schema?: string;
}): Promise<BackendHandle> {
  const { Queue, Worker } = withBackend(createPostgresBackend);
  const connection = {
    connectionString: options.url,
    schema: options.schema ?? 'bullmq',
    migrate: true,
  };
  const queue = new Queue(options.queueName, { connection });
  try {
    await queue.waitUntilReady();
  } catch (cause) {
    await queue.close().catch(() => undefined);
    throw new ServiceUnreachableError('Postgres', options.url, { cause });
  }
  return {
    kind: 'postgres',
    queue: queue as unknown as AnyQueue,
    createWorker: (processor: Processor, workerOptions: Omit<WorkerOptions, 'connection'>) =>
      new Worker(options.queueName, processor, {
        ...workerOptions,
        connection,
      }) as unknown as AnyWorker,
    close: () => queue.close(),
  };
}
