import { Migrator, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { RUN_STATUSES } from '@cairn/engine';
import { migrate, MIGRATIONS } from './migrate.js';
import { PostgresCheckpointStore } from './postgres-checkpoint-store.js';
import type { SessionKey } from './session-key.js';
import { migrateOnly, useMigrationDatabase } from './test-support/migration-database.js';
import { newRun } from './test-support/store-test-context.js';

const MIGRATION = '0036_h_implicit_sessions';

describe(`migration ${MIGRATION}`, () => {
  const database = useMigrationDatabase();

  it('keeps the sessions stored before it as they read, and down writes the row of every implicit session', async () => {
    const db = await database.open();
    await migrateOnly(db, (name) => name < MIGRATION);
    const store = new PostgresCheckpointStore(db);
    // Before: a session per tenant holding a run in every status, a member run and a fork.
    const keys: SessionKey[] = [
      { tenantId: null, sessionId: 'legacy' },
      { tenantId: 'acme', sessionId: 'legacy' },
    ];
    for (const key of keys) {
      for (const status of RUN_STATUSES) {
        const run = await store.createRun(
          newRun({ ...key, userId: `u-${key.tenantId}`, input: status }),
        );
        await sql`update runs set status = ${status} where run_id = ${run.runId}`.execute(db);
      }
      const [team] = (await store.getSessionView(key))!.runs;
      await store.createRun(
        newRun({ ...key, parentRunId: team!.run_id, parentToolCallId: 'call-1' }),
      );
      await store.createRun(newRun({ ...key, sharedHistory: { runId: team!.run_id, length: 0 } }));
    }
    const before = await Promise.all(keys.map((key) => store.getSessionView(key)));
    expect(before.map((view) => view?.runs.length)).toEqual([7, 7]);

    await migrate(db);
    expect(await Promise.all(keys.map((key) => store.getSessionView(key)))).toEqual(before);
    // After: a run that names no session opens an implicit one (no row), and its team's member joins it.
    const implicitRun = await store.createRun(newRun({ userId: 'u-new', tenantId: 'acme' }));
    await store.createRun(
      newRun({
        tenantId: 'acme',
        sessionId: implicitRun.sessionId,
        parentRunId: implicitRun.runId,
        parentToolCallId: 'call-1',
      }),
    );
    const implicit = { tenantId: 'acme', sessionId: implicitRun.sessionId };
    const implicitView = await store.getSessionView(implicit);
    expect(implicitView).toMatchObject({ user_id: 'u-new', runs: [{ run_id: implicitRun.runId }] });
    const { rows: none } = await sql`
      select 1 from sessions where session_id = ${implicitRun.sessionId}`.execute(db);
    expect(none).toEqual([]);

    const { error } = await new Migrator({
      db,
      provider: { getMigrations: () => Promise.resolve(MIGRATIONS) },
      allowUnorderedMigrations: true,
    }).migrateTo('0035_w_runs_fillfactor');
    expect(error).toBeUndefined();
    // Down: the implicit session has its row, reading as before; the foreign key is back.
    expect(await store.getSessionView(implicit)).toEqual(implicitView);
    expect(await Promise.all(keys.map((key) => store.getSessionView(key)))).toEqual(before);
    const { rows: fkeys } = await sql<{ conname: string }>`
      select conname from pg_constraint where conname = 'runs_session_fkey'`.execute(db);
    expect(fkeys).toHaveLength(1);
  });
});
