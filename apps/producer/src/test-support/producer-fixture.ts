import { randomUUID } from 'node:crypto';
import { createRegistry } from '@cairn/research-team';
import type { RunQueue } from '@cairn/queue';
import { hasTestRedis, testRedisUrl } from '@cairn/services';
import type { Message, Registry } from '@cairn/engine';
import type { RunOutcome } from '@cairn/engine/store';
import { createDb, PostgresCheckpointStore, PostgresWebhookStore } from '@cairn/store';
import { migratedTestDatabase } from '../../../../packages/store/src/test-support/migrated-test-database.js';
import type { Hono } from 'hono';
import { createApp, type AppDeps } from '../app.js';
import { openSchedules, type OpenedSchedules } from '../open-schedules.js';
import { ProducerService } from '../producer-service.js';
import { readinessChecks } from '../readiness-checks.js';

/** A producer app on a fresh database and a fresh queue: on the test Redis when there is one, else on BullMQ's PostgreSQL backend. */
export interface ProducerFixture {
  app: Hono;
  client: ProducerService;
  /** The whole store on the same database, on a pool of the test's own: for a test's direct reads, writes and SQL. */
  store: PostgresCheckpointStore;
  queue: RunQueue;
  /** The schedules beside the app (no firing worker: a test delivers firings with `schedules.service.fire`). */
  schedules: OpenedSchedules;
  /** Claims the run and finishes it COMPLETED with `content`, as a worker would. */
  complete(runId: string, content: string): Promise<void>;
  /** Claims the run and finishes it in ERROR, as a worker whose model kept failing would. */
  fail(runId: string): Promise<void>;
  close(): Promise<void>;
}

/** Opens a {@link ProducerFixture}; `overrides` replace parts of the app's deps, `registry` the research team's entities. */
export async function openProducerFixture(
  overrides: Partial<AppDeps> = {},
  { registry = createRegistry() }: { registry?: Registry } = {},
): Promise<ProducerFixture> {
  const database = await migratedTestDatabase();
  const client = await ProducerService.connect({
    databaseUrl: database.url,
    queue: {
      redisUrl: hasTestRedis() ? testRedisUrl() : undefined,
      queueName: `test-${randomUUID()}`,
    },
    registry,
    migrate: true,
  });
  const queue = client.runQueue;
  const store = new PostgresCheckpointStore(createDb(database.url));
  const schedules = await openSchedules({
    databaseUrl: database.url,
    queue: { redisUrl: hasTestRedis() ? testRedisUrl() : undefined, queueName: queue.name },
    catalog: registry,
    startRun: (request) => client.enqueueRun(request),
  });
  const app = createApp({
    client,
    queues: [queue.queue],
    webhooks: { webhooks: new PostgresWebhookStore(store.db), allowPrivate: true },
    schedules: schedules.service,
    ...overrides,
    healthChecks: { ...readinessChecks(client), ...overrides.healthChecks },
  });
  let closed = false;
  return {
    app,
    client,
    store,
    queue,
    schedules,
    complete: (runId, content) =>
      finish(store, runId, {
        status: 'COMPLETED',
        content,
        error: null,
        messages: [{ role: 'assistant', content }],
      }),
    fail: (runId) =>
      finish(store, runId, {
        status: 'ERROR',
        content: null,
        error: { name: 'ModelError', message: 'model unavailable', retryable: true },
        messages: [],
      }),
    close: async () => {
      if (closed) return;
      closed = true;
      await queue.queue.obliterate({ force: true }).catch(() => undefined);
      await schedules.queue.queue.obliterate({ force: true }).catch(() => undefined);
      await schedules.close();
      await client.close();
      await store.db.destroy();
      // The drop waits for the pool's closing sockets to go before it forces the rest.
      await database.drop();
    },
  };
}

async function finish(
  store: PostgresCheckpointStore,
  runId: string,
  outcome: Omit<RunOutcome, 'delta'> & { messages: Message[] },
): Promise<void> {
  const { epoch } = await store.claimRun(runId, { workerId: 'test', reason: 'run' });
  const { messages, ...rest } = outcome;
  await store.finishRun(runId, epoch, {
    ...rest,
    delta: { messages, toolCalls: [], usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 } },
  });
}
