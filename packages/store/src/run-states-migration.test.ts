import { sql, type Kysely } from 'kysely';
import { describe, expect, it } from 'vitest';
import { migrate } from './migrate.js';
import { PostgresCheckpointStore } from './postgres-checkpoint-store.js';
import type { Database } from './schema.js';
import { migrateOnly, useMigrationDatabase } from './test-support/migration-database.js';

const MIGRATION = '0031_w_run_states';
const BACK = '0032_w_run_states_back';

/** The lifecycle columns `run_states` copies, as `runs` has them. */
async function lifecycleOfRuns(db: Kysely<Database>) {
  const { rows } = await sql<Record<string, unknown>>`
    select run_id, status, updated_at, parent_run_id is null as top_level, tenant_id,
           waiting is not null as waiting, deadline_at
      from runs order by run_id`.execute(db);
  return rows;
}

async function lifecycleOfStates(db: Kysely<Database>) {
  const { rows } = await sql<Record<string, unknown>>`
    select run_id, status, updated_at, top_level, tenant_id, waiting, deadline_at
      from run_states order by run_id`.execute(db);
  return rows;
}

async function tableExists(db: Kysely<Database>, table: string): Promise<boolean> {
  const { rows } = await sql<{ found: boolean }>`
    select to_regclass(${table}) is not null as found`.execute(db);
  return rows[0]!.found;
}

async function indexesOf(db: Kysely<Database>, table: string): Promise<string[]> {
  const { rows } = await sql<{ indexname: string }>`
    select indexname from pg_indexes where tablename = ${table} order by indexname`.execute(db);
  return rows.map((r) => r.indexname);
}

/**
 * A store of the time before the migration: runs in every status (one parked for capacity, one
 * with a deadline, one of a tenant), a team with two member runs, and a fork of a finished run.
 */
async function oldFixture(db: Kysely<Database>): Promise<void> {
  await sql`insert into sessions (session_id, tenant_id) values ('s', null), ('s', 'acme')`.execute(
    db,
  );
  const run = (
    runId: string,
    status: string,
    extra: { parent?: string; tenant?: string; waiting?: string; deadline?: boolean } = {},
  ) =>
    sql`insert into runs (run_id, session_id, entity_kind, entity_name, status, input, checkpoint,
                          parent_run_id, parent_tool_call_id, tenant_id, waiting, deadline_at, updated_at)
      values (${runId}, 's', ${extra.parent ? 'agent' : 'team'}, 'researcher', ${status},
              ${`input of ${runId}`}, 'run', ${extra.parent ?? null},
              ${extra.parent ? `call-${runId}` : null}, ${extra.tenant ?? null},
              ${extra.waiting ?? null}::jsonb, ${extra.deadline ? sql`now() + interval '1 hour'` : null},
              now() - interval '2 hours')`.execute(db);
  await run('pending', 'PENDING', { deadline: true });
  await run('running', 'RUNNING', { waiting: '{"model":"gpt-small"}', tenant: 'acme' });
  await run('paused', 'PAUSED');
  await run('completed', 'COMPLETED');
  await run('error', 'ERROR');
  await run('cancelled', 'CANCELLED');
  await run('team', 'RUNNING');
  await run('member-1', 'COMPLETED', { parent: 'team' });
  await run('member-2', 'PAUSED', { parent: 'team' });
  await sql`insert into runs (run_id, session_id, entity_kind, entity_name, status, input, checkpoint,
                              shared_history_run_id, shared_history_length, forked_from)
    values ('fork', 's', 'agent', 'researcher', 'PENDING', 'input of fork', 'run',
            'completed', 0, '{"runId":"completed","messageIndex":0}')`.execute(db);
}

describe(`migration ${MIGRATION}`, () => {
  const database = useMigrationDatabase();

  it('copies every run’s lifecycle into run_states and keeps it there as runs move; 0032_w puts the indexes back on runs', async () => {
    const db = await database.open();
    await migrateOnly(db, (name) => name < MIGRATION);
    await oldFixture(db);
    const before = await lifecycleOfRuns(db);

    await migrateOnly(db, (name) => name <= MIGRATION);
    expect(await lifecycleOfStates(db)).toEqual(before);
    expect(before).toHaveLength(10);
    const runsIndexes = await indexesOf(db, 'runs');
    for (const moved of [
      'runs_status_idx',
      'runs_top_level_status_updated_idx',
      'runs_deadline_idx',
    ])
      expect(runsIndexes).not.toContain(moved);

    const store = new PostgresCheckpointStore(db);
    const listed = await store.listRuns({ statuses: ['PAUSED', 'RUNNING'], limit: 10 });
    expect(listed.runs.map((r) => r.run_id).sort()).toEqual(['paused', 'running', 'team']);
    const held = await store.listRuns({ waitingFor: 'either', limit: 10 });
    expect(held.runs.map((r) => r.run_id).sort()).toEqual(['paused', 'running']);
    expect(await store.countRunsByStatus('PAUSED')).toBe(2);
    const overview = await store.readFleetOverview({});
    expect(overview.byStatus).toMatchObject({ PENDING: 2, RUNNING: 2, PAUSED: 1 });
    expect(overview.waitingForCapacity).toEqual([{ model: 'gpt-small', runs: 1 }]);
    const live = await store.listRunsByStatus(['PENDING', 'RUNNING'], 60_000, {
      topLevelOnly: true,
    });
    expect(live.map((r) => r.runId).sort()).toEqual(['pending', 'running', 'team']);

    // A run moved after the migration moves its copy too; a deleted run takes it along.
    await store.forceCancel('pending');
    await store.forceCancel('running');
    await sql`delete from runs where run_id = 'fork'`.execute(db);
    expect(await lifecycleOfStates(db)).toEqual(await lifecycleOfRuns(db));

    // 0032_w takes it back: the indexes on runs again, run_states gone, the reads the same.
    await migrateOnly(db, (name) => name <= BACK);
    expect(await tableExists(db, 'run_states')).toBe(false);
    expect(await store.countRunsByStatus('PAUSED')).toBe(2);
    expect((await store.listRuns({ waitingFor: 'either', limit: 10 })).runs).toHaveLength(1);
    expect(await indexesOf(db, 'runs')).toEqual(
      expect.arrayContaining([
        'runs_deadline_idx',
        'runs_status_idx',
        'runs_top_level_held_idx',
        'runs_top_level_status_updated_idx',
        'runs_top_level_unfinished_idx',
        'runs_top_level_updated_idx',
      ]),
    );
  });

  it('leaves runs with the fillfactor of 0004_lean_commit once every migration ran (0035_w puts back what 0032_w reset)', async () => {
    const db = await database.open();
    await migrate(db);
    const { rows } = await sql<{ options: string[] | null }>`
      select reloptions as options from pg_class where relname = 'runs'`.execute(db);
    expect(rows[0]!.options).toEqual(['fillfactor=80']);
  });
});
