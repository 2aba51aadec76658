import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { migrate } from './migrate.js';
import { PostgresCheckpointStore } from './postgres-checkpoint-store.js';
import { newRun } from './test-support/store-test-context.js';
import { migrateOnly, useMigrationDatabase } from './test-support/migration-database.js';

const MIGRATION = '0008_a_tenant_sessions';

describe(`migration ${MIGRATION}`, () => {
  const { open } = useMigrationDatabase();

  it('keeps the sessions and runs stored before it reachable, each under its tenant', async () => {
    const db = await open();
    await migrateOnly(db, (name) => name !== MIGRATION);
    await sql`
        insert into sessions (session_id, user_id, tenant_id) values
          ('user-alice', 'alice', 'globex'), ('legacy', null, null)`.execute(db);
    await sql`
        insert into runs (run_id, session_id, tenant_id, parent_run_id, entity_kind, entity_name, status, input, checkpoint, created_at) values
          ('team-1', 'user-alice', 'globex', null, 'team', 'research-team', 'COMPLETED', 'research', 'tool-batch', now() - interval '2 minutes'),
          ('member-1', 'user-alice', null, 'team-1', 'agent', 'research-team/researcher', 'COMPLETED', 'delegated', 'tool-batch', now() - interval '1 minute'),
          ('old-1', 'legacy', null, null, 'agent', 'researcher', 'COMPLETED', 'old', 'run', now())`.execute(
      db,
    );

    await migrate(db);
    const store = new PostgresCheckpointStore(db);
    const globex = await store.getSessionView({ tenantId: 'globex', sessionId: 'user-alice' });
    expect(globex).toMatchObject({ session_id: 'user-alice', user_id: 'alice' });
    expect(globex?.runs.map((r) => r.run_id)).toEqual(['team-1']);
    // a member run stored without its session's tenant takes it
    expect((await store.getRun('member-1'))?.tenantId).toBe('globex');
    expect((await store.getRunView('team-1'))?.member_runs.map((m) => m.run_id)).toEqual([
      'member-1',
    ]);
    expect(
      (await store.getSessionView({ tenantId: null, sessionId: 'legacy' }))?.runs.map(
        (r) => r.run_id,
      ),
    ).toEqual(['old-1']);
    expect(await store.getSessionView({ tenantId: null, sessionId: 'user-alice' })).toBeUndefined();

    // another tenant's session of the same id is a new session; the old one keeps its runs and deletes alone
    const acme = await store.createRun(newRun({ sessionId: 'user-alice', tenantId: 'acme' }));
    expect(
      (await store.getSessionView({ tenantId: 'acme', sessionId: 'user-alice' }))?.runs.map(
        (r) => r.run_id,
      ),
    ).toEqual([acme.runId]);
    expect(await store.deleteSession({ tenantId: 'globex', sessionId: 'user-alice' })).toBe(true);
    expect(await store.getRun('member-1')).toBeUndefined();
    expect((await store.getRun(acme.runId))?.sessionId).toBe('user-alice');
  });
});
