import { Migrator, sql, type Kysely } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { Message } from '@cairn/engine';
import { migrate, MIGRATIONS } from './migrate.js';
import { PostgresCheckpointStore } from './postgres-checkpoint-store.js';
import { MESSAGES_PER_COMMIT_ROW } from './run-commits.js';
import type { Database } from './schema.js';
import { batchDelta } from './test-support/store-test-context.js';
import { migrateOnly, useMigrationDatabase } from './test-support/migration-database.js';

const MIGRATION = '0019_run_commits';
const STATUSES = ['PENDING', 'RUNNING', 'PAUSED', 'COMPLETED', 'ERROR', 'CANCELLED'] as const;
/** Over one row's worth, so the migration splits it. */
const LONG_WRITE = MESSAGES_PER_COMMIT_ROW + 6;
const at = (second: number) => new Date(Date.UTC(2026, 10, 30, 9, 0, second)).toISOString();

const message = (run: string, i: number): Message =>
  i % 2 === 0
    ? { role: 'user', content: `${run} says ${i}` }
    : { role: 'assistant', content: `${run} answers ${i}` };

/** A run as the schema before the migration holds it: its messages written `writes` at a time, each at its own second. */
async function oldRun(
  db: Kysely<Database>,
  runId: string,
  status: string,
  writes: readonly number[],
  extra: { parent?: string; sharedFrom?: { runId: string; length: number } } = {},
): Promise<number> {
  await sql`
    insert into runs (run_id, session_id, entity_kind, entity_name, status, input, checkpoint, epoch,
                      last_checkpoint_at_message_index, parent_run_id, parent_tool_call_id,
                      shared_history_run_id, shared_history_length, event_seq)
    values (${runId}, 'migrated', 'agent', 'researcher', ${status}, 'go', 'tool-batch', 1, 0,
            ${extra.parent ?? null}, ${extra.parent ? `call-of-${runId}` : null},
            ${extra.sharedFrom?.runId ?? null}, ${extra.sharedFrom?.length ?? null}, 0)`.execute(
    db,
  );
  let idx = extra.sharedFrom?.length ?? 0;
  let seq = 0;
  for (const [w, count] of writes.entries()) {
    const time = at(w * 2);
    await sql`
      insert into run_messages (run_id, idx, message, created_at)
      select ${runId}, ${idx}::int + g, (${JSON.stringify(
        Array.from({ length: count }, (_, i) => message(runId, idx + i)),
      )}::jsonb) -> g, ${time}
        from generate_series(0, ${count}::int - 1) g`.execute(db);
    idx += count;
    // The write's events: in the same transaction (its time), and one appended a second later.
    await sql`
      insert into run_event_batches (run_id, last_seq, first_seq, events, created_at) values
        (${runId}, ${seq + 2}, ${seq + 1}, ${JSON.stringify([
          { type: 'ModelRequestCompleted', data: { epoch: 1, at: time, model: 'm' } },
          `K0:${idx}:${count}`,
        ])}, ${time}),
        (${runId}, ${seq + 3}, ${seq + 3}, ${JSON.stringify([
          { type: 'ActionDecided', data: { write: w } },
        ])}, ${at(w * 2 + 1)})`.execute(db);
    seq += 3;
  }
  await sql`update runs set last_checkpoint_at_message_index = ${idx}, event_seq = ${seq} where run_id = ${runId}`.execute(
    db,
  );
  return idx;
}

/** Every message and event as the views give them, values compared as jsonb (json keeps its own key order). */
async function snapshot(db: Kysely<Database>) {
  const messages = await sql<{ row: unknown }>`
    select jsonb_build_object('run', run_id, 'idx', idx, 'message', message::jsonb, 'at', created_at) as row
      from run_messages order by run_id, idx`.execute(db);
  const events = await sql<{ row: unknown }>`
    select jsonb_build_object('run', run_id, 'seq', seq, 'type', type, 'data', data::jsonb, 'at', created_at,
                              'epoch', batch_epoch, 'batch_at', batch_at) as row
      from run_events order by run_id, seq`.execute(db);
  return { messages: messages.rows.map((r) => r.row), events: events.rows.map((r) => r.row) };
}

describe(`migration ${MIGRATION}`, () => {
  const { open } = useMigrationDatabase();

  it('moves every run’s messages and events into rows of writes: every reader reads the same, and runs go on from where they were', async () => {
    const db = await open();
    await migrateOnly(db, (name) => name < MIGRATION);
    await sql`insert into sessions (session_id) values ('migrated')`.execute(db);
    const ends: Record<string, number> = {};
    for (const status of STATUSES) {
      ends[status] = await oldRun(db, `run-${status}`, status, [1, 4, LONG_WRITE, 3]);
    }
    await oldRun(db, 'member', 'RUNNING', [2, 2], { parent: 'run-RUNNING' });
    const sharedLength = 1 + 4 + LONG_WRITE;
    await oldRun(db, 'fork', 'PAUSED', [1, 2], {
      sharedFrom: { runId: 'run-COMPLETED', length: sharedLength },
    });
    const before = await snapshot(db);

    await migrate(db);

    expect(await snapshot(db)).toEqual(before);
    const { rows } = await sql<{ rows: number; long: number }>`
        select count(*)::int as rows, max(end_idx - first_idx)::int as long from run_commits
         where run_id = 'run-RUNNING' and messages is not null`.execute(db);
    // The 70-message write is two rows; the others one each.
    expect(rows[0]).toEqual({ rows: 5, long: MESSAGES_PER_COMMIT_ROW });

    const store = new PostgresCheckpointStore(db);
    for (const status of STATUSES) {
      const runId = `run-${status}`;
      const expected = Array.from({ length: ends[status]! }, (_, i) => message(runId, i));
      expect((await store.loadHistory(runId)).messages).toEqual(expected);
      expect(
        (await store.listCheckpoints(runId)).map((c) => [c.seq, c.messageIndex, c.at]),
      ).toEqual([
        [1, 1, new Date(at(0))],
        [2, 5, new Date(at(2))],
        [3, 5 + LONG_WRITE, new Date(at(4))],
        [4, 8 + LONG_WRITE, new Date(at(6))],
      ]);
      expect(await store.checkpointEndingAt(runId, 5 + LONG_WRITE)).toBe(3);
      expect(await store.checkpointEndingAt(runId, 5 + MESSAGES_PER_COMMIT_ROW)).toBeUndefined();
      // A page across the boundary of the long write's two rows (at 5 + 64).
      const page = await store.listRunMessages(runId, { offset: 60, limit: 12 });
      expect(page.total).toBe(ends[status]);
      expect(page.messages.map((m) => m.index)).toEqual(
        Array.from({ length: 12 }, (_, i) => 60 + i),
      );
      expect(page.messages[0]!.message).toEqual(message(runId, 60));
      const events = await store.listEvents(runId, 4, 3);
      expect(events.map((e) => [e.seq, e.type])).toEqual([
        [5, 'CheckpointCommitted'],
        [6, 'ActionDecided'],
        [7, 'ModelRequestCompleted'],
      ]);
      expect(events[0]!.data).toEqual({
        lastCheckpointAtMessageIndex: 5,
        messages: 4,
        epoch: 1,
        at: at(2),
      });
    }

    // The fork reads its source's history up to its point, then its own.
    const fork = (await store.loadHistory('fork')).messages;
    expect(fork).toHaveLength(sharedLength + 3);
    expect(fork[sharedLength - 1]).toEqual(message('run-COMPLETED', sharedLength - 1));
    expect(fork[sharedLength]).toEqual(message('fork', sharedLength));
    expect((await store.listRunMessages('fork', { offset: 70, limit: 10 })).messages).toEqual(
      Array.from({ length: 8 }, (_, i) => ({
        index: 70 + i,
        message: i + 70 < sharedLength ? message('run-COMPLETED', 70 + i) : message('fork', 70 + i),
      })),
    );

    // The run view shows the member run with its messages.
    const view = await store.getRunView('run-RUNNING');
    expect(view?.member_runs.map((m) => m.messages?.length)).toEqual([4]);

    // The running run and its member go on: the next write follows the old messages and events.
    for (const runId of ['run-RUNNING', 'member']) {
      const { epoch } = await store.claimRun(runId, { workerId: 'w2', reason: 'recovered' });
      const committed = (await store.loadHistory(runId)).messages.length;
      expect(await store.commitCheckpoint(runId, epoch, batchDelta(1))).toBe(committed + 4);
      const seq = await store.appendEvent(runId, { type: 'Note', data: {} });
      expect((await store.listEvents(runId, seq - 1)).map((e) => e.type)).toEqual(['Note']);
      expect((await store.loadHistory(runId)).messages.slice(committed)).toEqual(
        batchDelta(1).messages,
      );
    }

    // Retention deletes a finished run's rows with it.
    await sql`delete from runs where run_id = 'fork'`.execute(db);
    await store.pruneFinishedRuns({ olderThan: new Date(Date.now() + 60_000) });
    const { rows: left } = await sql<{ run_id: string }>`
        select distinct run_id from run_commits order by run_id`.execute(db);
    expect(left.map((r) => r.run_id)).toEqual([
      'member',
      'run-PAUSED',
      'run-PENDING',
      'run-RUNNING',
    ]);
  });

  it('reverts to a row per message and per event batch, reading the same', async () => {
    const db = await open();
    await migrateOnly(db, (name) => name < MIGRATION);
    await sql`insert into sessions (session_id) values ('migrated')`.execute(db);
    await oldRun(db, 'run-a', 'COMPLETED', [1, LONG_WRITE, 2]);
    const before = await snapshot(db);
    await migrate(db);
    const { error } = await new Migrator({
      db,
      provider: { getMigrations: () => Promise.resolve({ ...MIGRATIONS }) },
      allowUnorderedMigrations: true,
    }).migrateTo('0018_derived_events');
    expect(error).toBeUndefined();
    expect(await snapshot(db)).toEqual(before);
  });
});
