import { sql } from 'kysely';
import type { Kysely } from 'kysely';

/**
 * Tenants and idempotent enqueue: `sessions.tenant_id` and `runs.tenant_id`
 * (null: created by an admin key), and `run_idempotency_keys`, one row per
 * `Idempotency-Key` a tenant used, naming the run it created and the digest of
 * the request that created it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('sessions').addColumn('tenant_id', 'text').execute();
  await db.schema.alterTable('runs').addColumn('tenant_id', 'text').execute();
  await db.schema
    .createIndex('runs_tenant_created_idx')
    .on('runs')
    .columns(['tenant_id', 'created_at'])
    .where(sql.ref('tenant_id'), 'is not', null)
    .execute();
  await db.schema
    .createTable('run_idempotency_keys')
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('idempotency_key', 'text', (c) => c.notNull())
    .addColumn('run_id', 'text', (c) => c.notNull())
    .addColumn('request_digest', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('run_idempotency_keys_pkey', ['scope', 'idempotency_key'])
    // Deferred: the key is claimed first, so a concurrent request waits on it before any run is written.
    .addForeignKeyConstraint(
      'run_idempotency_keys_run_id_fkey',
      ['run_id'],
      'runs',
      ['run_id'],
      (fk) => fk.onDelete('cascade').deferrable().initiallyDeferred(),
    )
    .execute();
  await db.schema
    .createIndex('run_idempotency_keys_run_id_idx')
    .on('run_idempotency_keys')
    .column('run_id')
    .execute();
}

/** Drops what {@link up} added. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('run_idempotency_keys').execute();
  await db.schema.dropIndex('runs_tenant_created_idx').execute();
  await db.schema.alterTable('runs').dropColumn('tenant_id').execute();
  await db.schema.alterTable('sessions').dropColumn('tenant_id').execute();
}
