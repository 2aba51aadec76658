import { sql } from 'kysely';
import type { Kysely } from 'kysely';

/**
 * Creates `pending_actions`: one row per gated tool call of a paused run,
 * decided by compare-and-set and consumed by the fenced write that claims
 * the call for execution.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('pending_actions')
    .addColumn('action_id', 'text', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('approval', 'external')`))
    .addColumn('run_id', 'text', (c) => c.notNull().references('runs.run_id').onDelete('cascade'))
    .addColumn('root_run_id', 'text', (c) =>
      c.notNull().references('runs.run_id').onDelete('cascade'),
    )
    .addColumn('member_path', 'jsonb', (c) => c.notNull())
    .addColumn('tool_call_id', 'text', (c) => c.notNull())
    .addColumn('tool', 'text', (c) => c.notNull())
    .addColumn('args', 'jsonb', (c) => c.notNull())
    .addColumn('args_digest', 'text', (c) => c.notNull())
    .addColumn('batch', 'integer', (c) => c.notNull())
    .addColumn('status', 'text', (c) =>
      c
        .notNull()
        .defaultTo('pending')
        .check(sql`status in ('pending', 'decided', 'expired', 'cancelled')`),
    )
    .addColumn('decision', 'jsonb')
    .addColumn('on_timeout', 'text', (c) =>
      c.notNull().check(sql`on_timeout in ('reject', 'error')`),
    )
    .addColumn('expires_at', 'timestamptz')
    .addColumn('decided_at', 'timestamptz')
    .addColumn('consumed_at', 'timestamptz')
    .addColumn('consumed_epoch', 'integer')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('pending_actions_run_call_key', ['run_id', 'tool_call_id'])
    .execute();
  await db.schema
    .createIndex('pending_actions_root_status_idx')
    .on('pending_actions')
    .columns(['root_run_id', 'status'])
    .execute();
}

/** Drops `pending_actions`. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('pending_actions').execute();
}
