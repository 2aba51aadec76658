import { sql } from 'kysely';
import type { Kysely } from 'kysely';

/**
 * The lean checkpoint commit:
 * - `runs_status_idx` on (status) only: a checkpoint changes `updated_at` but
 *   no indexed column, so its runs UPDATE can be HOT (no new index entries),
 *   with room left in each page (fillfactor 80) for the new row version;
 * - `runs.event_seq`: the last event sequence number of the run, advanced by
 *   the statement that stores events (the checkpoint, the finish), so that
 *   events need no `max(seq)` read and never collide;
 * - `tool_calls.result_message_idx`: where a tool call's result is stored
 *   once, in its tool message; `result` stays NULL then.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('runs_status_idx').execute();
  await db.schema.createIndex('runs_status_idx').on('runs').column('status').execute();
  await sql`alter table runs set (fillfactor = 80)`.execute(db);
  await db.schema
    .alterTable('runs')
    .addColumn('event_seq', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await sql`
    update runs set event_seq = e.seq
      from (select run_id, max(seq) as seq from run_events group by run_id) as e
     where e.run_id = runs.run_id`.execute(db);
  await db.schema.alterTable('tool_calls').addColumn('result_message_idx', 'integer').execute();
}

/** Restores 0003's shape. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('tool_calls').dropColumn('result_message_idx').execute();
  await db.schema.alterTable('runs').dropColumn('event_seq').execute();
  await sql`alter table runs reset (fillfactor)`.execute(db);
  await db.schema.dropIndex('runs_status_idx').execute();
  await db.schema
    .createIndex('runs_status_idx')
    .on('runs')
    .columns(['status', 'updated_at'])
    .execute();
}
