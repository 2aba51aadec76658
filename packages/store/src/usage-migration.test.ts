import { Migrator, sql, type Kysely } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { Usage } from '@cairn/engine';
import { migrate, MIGRATIONS } from './migrate.js';
import { PostgresCheckpointStore } from './postgres-checkpoint-store.js';
import type { Database } from './schema.js';
import { migrateOnly, useMigrationDatabase } from './test-support/migration-database.js';

const MIGRATION = '0021_compact_usage';

/** Usage as the keyed `jsonb` before the migration held it: with a per-model part, cached tokens and cost. */
const PRICED: Usage = {
  inputTokens: 1200,
  outputTokens: 300,
  totalTokens: 1500,
  cachedInputTokens: 200,
  costMicroUsd: 4100,
  byModel: {
    'gpt-small': {
      inputTokens: 1000,
      cachedInputTokens: 200,
      outputTokens: 200,
      costMicroUsd: 2100,
    },
    'gpt-large': { inputTokens: 200, cachedInputTokens: 0, outputTokens: 100, costMicroUsd: 2000 },
  },
};
/** Usage as a run of a model with no price held it. */
const UNPRICED: Usage = { inputTokens: 40, outputTokens: 2, totalTokens: 42 };

async function oldRun(db: Kysely<Database>, runId: string, usage: Usage): Promise<void> {
  await sql`insert into runs (run_id, session_id, entity_kind, entity_name, status, input, checkpoint, usage)
    values (${runId}, 'migrated', 'agent', 'researcher', 'COMPLETED', 'go', 'run',
            ${JSON.stringify(usage)}::jsonb)`.execute(db);
}

describe(`migration ${MIGRATION}`, () => {
  const database = useMigrationDatabase();

  it('stores every run’s usage positional and the store reads it as before; down restores the keyed object', async () => {
    const db = await database.open();
    await migrateOnly(db, (name) => name < MIGRATION);
    await sql`insert into sessions (session_id) values ('migrated')`.execute(db);
    await oldRun(db, 'priced', PRICED);
    await oldRun(db, 'unpriced', UNPRICED);
    await sql`insert into runs (run_id, session_id, entity_kind, entity_name, status, input, checkpoint)
      values ('fresh', 'migrated', 'agent', 'researcher', 'PENDING', 'go', 'run')`.execute(db);

    await migrate(db);
    const store = new PostgresCheckpointStore(db);
    expect((await store.getRun('priced'))?.usage).toEqual(PRICED);
    expect((await store.getRun('unpriced'))?.usage).toEqual(UNPRICED);
    expect((await store.getRun('fresh'))?.usage).toEqual({
      inputTokens: 0,
      outputTokens: 0,
      totalTokens: 0,
    });
    const { rows } = await sql<{ bytes: number }>`
      select pg_column_size(usage) as bytes from runs where run_id = 'priced'`.execute(db);
    expect(rows[0]!.bytes).toBeLessThan(JSON.stringify(PRICED).length / 2);

    const { error } = await new Migrator({
      db,
      provider: { getMigrations: () => Promise.resolve(MIGRATIONS) },
    }).migrateTo('0020_commit_tool_calls');
    expect(error).toBeUndefined();
    const { rows: keyed } = await sql<{ run_id: string; usage: Usage }>`
      select run_id, usage from runs order by run_id`.execute(db);
    expect(keyed).toEqual([
      { run_id: 'fresh', usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 } },
      { run_id: 'priced', usage: PRICED },
      { run_id: 'unpriced', usage: UNPRICED },
    ]);
  });
});
