import { randomUUID } from 'node:crypto';
import { createRegistry } from '@cairn/research-team';
import { ProducerService } from '@cairn/producer';
import { ConfigError } from '@cairn/runtime';
import { testDatabase, type TestDatabase } from '@cairn/services';
import { createDb, ServedEntityCatalog } from '@cairn/store';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startWorker, type CairnWorker } from './start-worker.js';

let database: TestDatabase;
let worker: CairnWorker | undefined;
let client: ProducerService | undefined;
beforeEach(async () => {
  database = await testDatabase();
  process.env.RESEARCH_TOOL_DELAY_MS = '20';
});
afterEach(async () => {
  await worker?.close();
  await client?.close();
  worker = client = undefined;
  await database.drop();
});

const quiet = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

describe('startWorker from user code', () => {
  it('records the entities it serves; a client with no registry validates names from them and the run completes', async () => {
    const queueName = `test-${randomUUID()}`;
    const common = {
      databaseUrl: database.url,
      queueBackend: 'postgres' as const,
      queueName,
      env: {},
    };
    worker = await startWorker({
      ...common,
      registry: createRegistry(),
      workerId: 'app-worker',
      migrate: true,
      logger: quiet,
    });

    const db = createDb(database.url);
    const served = await new ServedEntityCatalog(db).list();
    await db.destroy();
    expect(served.map((e) => `${e.kind}:${e.name}:${e.workerId}`).sort()).toEqual([
      'agent:research-team/researcher:app-worker',
      'agent:researcher:app-worker',
      'team:research-team:app-worker',
    ]);

    client = await ProducerService.connect({
      databaseUrl: database.url,
      queue: { backend: 'postgres', queueName },
    });
    await expect(
      client.enqueueRun({ entity: { kind: 'team', name: 'nobody' }, input: 'x' }),
    ).rejects.toThrow(/no team named "nobody"/);
    const run = await client.enqueueRun({
      entity: { kind: 'team', name: 'research-team' },
      input: 'Research X',
    });
    const done = await client.waitForRun(run.runId, { timeoutMs: 30_000 });
    expect(done.status).toBe('COMPLETED');
    expect((await client.getRun(run.runId))!.attempts[0]!.worker_id).toBe('app-worker');
  });

  it('refuses a Registry object with execution threads, naming the option', async () => {
    const refused = startWorker({
      databaseUrl: database.url,
      registry: createRegistry(),
      executionThreads: 2,
      env: {},
      logger: quiet,
    });
    await expect(refused).rejects.toThrow(ConfigError);
    await expect(refused).rejects.toThrow(/^executionThreads/);
  });
});
