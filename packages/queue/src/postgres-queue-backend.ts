import { createPostgresBackend, withBackend } from 'bullmq';
import type { Processor, WorkerOptions } from 'bullmq';
import { ServiceUnreachableError } from '@cairn/runtime';
import type { AnyQueue, AnyWorker, BackendHandle, WorkerHooks } from './backend-handle.js';
import { openPostgresClockBook } from './postgres-clock-book.js';
import { openPostgresLivenessProbe } from './postgres-liveness-probe.js';
import { asError, startLivenessWatch } from './worker-liveness.js';

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
    createWorker: (
      processor: Processor,
      workerOptions: Omit<WorkerOptions, 'connection'>,
      hooks: WorkerHooks = {},
    ) => {
      // Started once its liveness connection is open: a listed worker always has one to be seen by.
      const worker = new Worker(options.queueName, processor, {
        ...workerOptions,
        autorun: false,
        connection,
      }) as unknown as AnyWorker;
      const run = () => {
        if (workerOptions.autorun !== false && !worker.closing)
          worker.run().catch((error: unknown) => worker.emit('error', asError(error)));
      };
      if (hooks.deathSignal !== true) run();
      else
        startLivenessWatch(
          worker,
          () =>
            openPostgresLivenessProbe(worker, {
              url: options.url,
              schema: connection.schema,
              queueName: options.queueName,
            }),
          hooks,
          run,
        );
      return worker;
    },
    openClockBook: () =>
      openPostgresClockBook({
        url: options.url,
        schema: connection.schema,
        queueName: options.queueName,
      }),
    close: () => queue.close(),
  };
}
