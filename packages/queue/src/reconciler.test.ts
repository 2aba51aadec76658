import { randomUUID } from 'node:crypto';
import { testDatabase, type TestDatabase } from '@cairn/services';
import { ADVISORY_LOCKS, createDb, migrate, PostgresCheckpointStore } from '@cairn/store';
import { UnrecoverableError } from 'bullmq';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { resumeJob } from './job-catalog.js';
import { RunQueue } from './queue-backend.js';
import { reconcileOnce } from './reconciler.js';

let database: TestDatabase;
let db: ReturnType<typeof createDb>;
let client: { store: PostgresCheckpointStore; runQueue: RunQueue };

beforeEach(async () => {
  database = await testDatabase();
  db = createDb(database.url);
  await migrate(db);
  // BullMQ's PostgreSQL backend: no Redis needed.
  const runQueue = await RunQueue.open({
    backend: 'postgres',
    databaseUrl: database.url,
    queueName: `test-${randomUUID()}`,
  });
  client = { store: new PostgresCheckpointStore(db), runQueue };
});
afterEach(async () => {
  await client.runQueue.close();
  await db.destroy();
  await database.drop();
});

/** Top-level runs written without a job, as when the enqueue failed after the row was written. */
async function orphans(count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const run = await client.store.createRun({
      entity: { kind: 'agent', name: 'researcher' },
      input: `orphan ${i}`,
      checkpoint: 'tool-batch',
    });
    ids.push(run.runId);
  }
  return ids;
}

describe('reconcileOnce', () => {
  it('looks at a batch per pass and goes on where the last pass stopped, until every orphan has its job', async () => {
    const ids = await orphans(5);
    // a member run is its team's business: never reconciled on its own
    await client.store.createRun({
      entity: { kind: 'agent', name: 'researcher' },
      input: 'member',
      checkpoint: 'tool-batch',
      parentRunId: ids[0],
    });
    const options = {
      store: client.store,
      runQueue: client.runQueue,
      olderThanMs: 0,
      batchSize: 2,
    };

    const first = await reconcileOnce(options);
    expect(first).toMatchObject({ locked: true, checked: 2 });
    expect(first.enqueued).toEqual(ids.slice(0, 2));
    const second = await reconcileOnce({ ...options, after: first.cursor });
    expect(second.enqueued).toEqual(ids.slice(2, 4));
    const third = await reconcileOnce({ ...options, after: second.cursor });
    expect(third.enqueued).toEqual(ids.slice(4));
    expect(third.cursor).toBeUndefined();

    for (const id of ids) expect(await client.runQueue.liveJobFor(id), id).toBeDefined();
    // from the start again: every run has its job now, nothing is enqueued twice
    const again = await reconcileOnce({ ...options, batchSize: 10 });
    expect(again).toMatchObject({ checked: 5, enqueued: [] });
  });

  it('does nothing while another worker holds the reconciler lock', async () => {
    await orphans(2);
    const other = createDb(database.url, { max: 1 });
    try {
      await other.connection().execute(async (connection) => {
        await sql`select pg_advisory_lock(${ADVISORY_LOCKS.reconciler.toString()}::bigint)`.execute(
          connection,
        );
        const skipped = await reconcileOnce({
          store: client.store,
          runQueue: client.runQueue,
          olderThanMs: 0,
        });
        expect(skipped).toEqual({
          locked: false,
          checked: 0,
          enqueued: [],
          expired: [],
          ended: [],
        });
        await sql`select pg_advisory_unlock(${ADVISORY_LOCKS.reconciler.toString()}::bigint)`.execute(
          connection,
        );
      });
    } finally {
      await other.destroy();
    }
    expect(
      (await reconcileOnce({ store: client.store, runQueue: client.runQueue, olderThanMs: 0 }))
        .enqueued,
    ).toHaveLength(2);
  });

  it("enqueues again the resume of a decided paused run whose resume job failed (it ran out of retries while left for another definition's workers)", async () => {
    const run = await client.store.createRun({
      entity: { kind: 'agent', name: 'researcher' },
      input: 'paused',
      checkpoint: 'tool-batch',
    });
    // Paused with every action decided: what listResumablePausedRuns finds.
    await db
      .updateTable('runs')
      .set({ status: 'PAUSED', epoch: 1 })
      .where('run_id', '=', run.runId)
      .execute();
    const worker = client.runQueue.createWorker(
      async () => {
        throw new UnrecoverableError('left for a worker with its definition');
      },
      { autorun: true },
    );
    try {
      const job = await client.runQueue.add(resumeJob(run.runId, 1));
      await expect.poll(() => job.getState(), { timeout: 10_000 }).toBe('failed');
    } finally {
      await worker.close();
    }
    expect(await client.runQueue.liveJobFor(run.runId)).toBeUndefined();

    const pass = await reconcileOnce({
      store: client.store,
      runQueue: client.runQueue,
      olderThanMs: 0,
    });
    expect(pass.enqueued).toEqual([run.runId]);
    // The resume takes a slot in its tenant's fair line (a BullMQ priority), as a new run's job does.
    expect((await client.runQueue.liveJobFor(run.runId))?.state).toBe('prioritized');
  });
});
