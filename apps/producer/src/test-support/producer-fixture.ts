import { randomUUID } from 'node:crypto';
import { createRegistry } from '@cairn/research-team';
import { CairnClient, type RunQueue } from '@cairn/queue';
import { testDatabase, testRedisUrl } from '@cairn/services';
import type { Hono } from 'hono';
import { createApp, type AppDeps } from '../app.js';
import { readinessChecks } from '../readiness-checks.js';

/** A producer app on a fresh database and a fresh queue on the test Redis. */
export interface ProducerFixture {
  app: Hono;
  client: CairnClient;
  queue: RunQueue;
  /** Claims the run and finishes it COMPLETED with `content`, as a worker would. */
  complete(runId: string, content: string): Promise<void>;
  close(): Promise<void>;
}

/** Opens a {@link ProducerFixture}; `overrides` replace parts of the app's deps. */
export async function openProducerFixture(overrides: Partial<AppDeps> = {}): Promise<ProducerFixture> {
  const database = await testDatabase();
  const client = await CairnClient.connect({
    databaseUrl: database.url,
    queue: { redisUrl: testRedisUrl(), queueName: `test-${randomUUID()}` },
    registry: createRegistry(),
    migrate: true,
  });
  const queue = client.runQueue;
  const app = createApp({
    client,
    queues: [queue.queue],
    ...overrides,
    healthChecks: { ...readinessChecks(client), ...overrides.healthChecks },
  });
  let closed = false;
  return {
    app,
    client,
    queue,
    complete: async (runId, content) => {
      const { epoch } = await client.store.claimRun(runId, { workerId: 'test', reason: 'run' });
      await client.store.finishRun(runId, epoch, {
        status: 'COMPLETED',
        content,
        error: null,
        delta: { messages: [{ role: 'assistant', content }], toolCalls: [], usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 } },
      });
    },
    close: async () => {
      if (closed) return;
      closed = true;
      await queue.queue.obliterate({ force: true }).catch(() => undefined);
      await client.close();
      await database.drop();
    },
  };
}
