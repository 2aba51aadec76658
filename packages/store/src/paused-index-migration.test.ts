import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { migrate } from './migrate.js';
import { PostgresCheckpointStore } from './postgres-checkpoint-store.js';
import { migrateOnly, useMigrationDatabase } from './test-support/migration-database.js';

const MIGRATION = '0033_w_paused_index';

describe(`migration ${MIGRATION}`, () => {
  const database = useMigrationDatabase();

  it('counts PAUSED runs, member runs included, from the partial index that replaced runs_status_idx', async () => {
    const db = await database.open();
    await migrateOnly(db, (name) => name < MIGRATION);
    await sql`insert into sessions (session_id) values ('s')`.execute(db);
    for (const [runId, status, parent] of [
      ['team', 'PAUSED', null],
      ['member', 'PAUSED', 'team'],
      ['done', 'COMPLETED', null],
      ['live', 'RUNNING', null],
    ] as const)
      await sql`insert into runs (run_id, session_id, entity_kind, entity_name, status, input, checkpoint,
                                  parent_run_id, parent_tool_call_id)
        values (${runId}, 's', 'agent', 'researcher', ${status}, 'go', 'run', ${parent},
                ${parent === null ? null : `call-${runId}`})`.execute(db);

    await migrate(db);
    const store = new PostgresCheckpointStore(db);
    expect(await store.countRunsByStatus('PAUSED')).toBe(2);
    expect(await store.countRunsByStatus('RUNNING')).toBe(1);
    // On one connection: a table this small is read whole unless told not to.
    const rows = await db.connection().execute(async (connection) => {
      await sql`set enable_seqscan = off`.execute(connection);
      const plan = await sql<{ 'QUERY PLAN': string }>`
        explain select count(*) from runs where status = 'PAUSED'`.execute(connection);
      await sql`reset enable_seqscan`.execute(connection);
      return plan.rows;
    });
    expect(rows.map((r) => r['QUERY PLAN']).join('\n')).toContain('runs_paused_idx');
    const { rows: indexes } = await sql<{ indexname: string }>`
      select indexname from pg_indexes where tablename = 'runs' and indexname = 'runs_status_idx'`.execute(
      db,
    );
    expect(indexes).toEqual([]);
  });
});
