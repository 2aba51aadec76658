import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { migrate } from './migrate.js';
import { PostgresCheckpointStore } from './postgres-checkpoint-store.js';
import { batchDelta } from './test-support/store-test-context.js';
import { migrateOnly, useMigrationDatabase } from './test-support/migration-database.js';

const MIGRATION = '0012_a_event_batches';

describe(`migration ${MIGRATION}`, () => {
  const { open } = useMigrationDatabase();

  it('keeps the events stored one row each readable as before, and a run stored before it resumes with the next numbers', async () => {
    const db = await open();
    await migrateOnly(db, (name) => name < MIGRATION);

    // Today's layout, written as that schema held it: a RUNNING run with one committed batch
    // (four messages, a row each) and its events, one row each.
    const store = new PostgresCheckpointStore(db);
    const runId = 'run-before-0012';
    await sql`insert into sessions (session_id) values ('s-before-0012')`.execute(db);
    await sql`
        insert into runs (run_id, session_id, entity_kind, entity_name, status, input, checkpoint, epoch, last_checkpoint_at_message_index)
        values (${runId}, 's-before-0012', 'agent', 'researcher', 'RUNNING', 'find things', 'tool-batch', 1, 4)`.execute(
      db,
    );
    await sql`insert into run_attempts (run_id, epoch, worker_id, reason) values (${runId}, 1, 'w1', 'run')`.execute(
      db,
    );
    await sql`
        insert into run_messages (run_id, idx, message)
        select ${runId}, m.ord - 1, m.message::jsonb
          from unnest(${batchDelta(1).messages.map((m) => JSON.stringify(m))}::text[]) with ordinality as m(message, ord)`.execute(
      db,
    );
    await sql`
        insert into run_events (run_id, seq, type, data, created_at) values
          (${runId}, 1, 'RunStarted', '{"epoch":1,"at":"2026-12-01T10:00:00.000Z"}', '2026-12-01T10:00:00Z'),
          (${runId}, 2, 'ToolCallCompleted', '{"epoch":1,"toolCallId":"call_1_1","name":"slow_fetch_detail"}', '2026-12-01T10:00:01Z'),
          (${runId}, 3, 'CheckpointCommitted', '{"epoch":1,"lastCheckpointAtMessageIndex":4}', '2026-12-01T10:00:02Z')`.execute(
      db,
    );
    await sql`update runs set event_seq = 3 where run_id = ${runId}`.execute(db);
    const stored = await sql<{ row: unknown }>`
        select to_jsonb(e) as row from run_events e order by seq`.execute(db);

    await migrate(db);

    // Every event reads the same: numbers, types, data and times (the columns later migrations add left out).
    const after = await sql<{ row: Record<string, unknown> }>`
        select to_jsonb(e) - 'batch_last_seq' - 'batch_epoch' - 'batch_at' as row
          from run_events e order by seq`.execute(db);
    expect(after.rows).toEqual(stored.rows);
    const events = await store.listEvents(runId);
    expect(events.map((e) => [e.seq, e.type])).toEqual([
      [1, 'RunStarted'],
      [2, 'ToolCallCompleted'],
      [3, 'CheckpointCommitted'],
    ]);
    expect(events[1]!.data).toEqual({
      epoch: 1,
      toolCallId: 'call_1_1',
      name: 'slow_fetch_detail',
    });
    expect(events[2]!.createdAt).toEqual(new Date('2026-12-01T10:00:02Z'));
    expect((await store.listEvents(runId, 1, 1)).map((e) => e.seq)).toEqual([2]);

    // The run resumes on another worker: its next checkpoint's events follow the old ones.
    const resumed = await store.claimRun(runId, { workerId: 'w2', reason: 'recovered' });
    const history = await store.loadHistory(runId);
    expect(history.messages).toHaveLength(4);
    const at = new Date().toISOString();
    await store.commitCheckpoint(runId, resumed.epoch, {
      ...batchDelta(2),
      events: [
        {
          type: 'ToolCallStarted',
          runId,
          epoch: resumed.epoch,
          data: { toolCallId: 'call_2_1' },
          at,
        },
        { type: 'CheckpointCommitted', runId, epoch: resumed.epoch, data: {}, at },
      ],
    });
    expect((await store.listEvents(runId, 3)).map((e) => [e.seq, e.type])).toEqual([
      [4, 'ToolCallStarted'],
      [5, 'CheckpointCommitted'],
    ]);
    const tree = await store.readRunTreeEvents(runId, [2]);
    expect(tree?.events.map((e) => e.seq)).toEqual([3, 4, 5]);
    const { rows: batches } = await sql<{ first_seq: number; last_seq: number }>`
        select first_seq, last_seq from run_commits where run_id = ${runId} and events is not null order by last_seq`.execute(
      db,
    );
    expect(batches).toEqual([
      { first_seq: 1, last_seq: 1 },
      { first_seq: 2, last_seq: 2 },
      { first_seq: 3, last_seq: 3 },
      { first_seq: 4, last_seq: 5 },
    ]);
  });
});
