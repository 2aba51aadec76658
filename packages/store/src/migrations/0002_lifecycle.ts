import { sql } from 'kysely';
import type { Kysely } from 'kysely';

/**
 * Creates `run_continue_requests`: a continue is stored with its input in the
 * statement that checks the run's status, and marked applied by the fenced
 * commit of the first execution that takes its input in. At most one request
 * per run is waiting at a time, named by `runs.waiting_continue_request` so
 * that a finish racing the request sees it (a completion is refused while a
 * continue waits that the finishing execution did not apply). Also makes a member run unique per team tool
 * call, so a delegation is never started twice.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('run_continue_requests')
    .addColumn('request_id', 'bigserial', (c) => c.primaryKey())
    .addColumn('run_id', 'text', (c) => c.notNull().references('runs.run_id').onDelete('cascade'))
    .addColumn('input', 'text')
    .addColumn('requested_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('applied_epoch', 'integer')
    .addColumn('applied_at', 'timestamptz')
    .execute();
  await db.schema.alterTable('runs').addColumn('waiting_continue_request', 'bigint').execute();
  await sql`create index runs_waiting_continue on runs (waiting_continue_request) where waiting_continue_request is not null`.execute(
    db,
  );
  await sql`create unique index run_continue_requests_one_waiting on run_continue_requests (run_id) where applied_epoch is null`.execute(
    db,
  );
  await sql`create index run_continue_requests_by_run on run_continue_requests (run_id, requested_at)`.execute(
    db,
  );
  await sql`create unique index runs_one_member_run_per_tool_call on runs (parent_run_id, parent_tool_call_id) where parent_tool_call_id is not null`.execute(
    db,
  );
}

/** Drops what {@link up} created. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists runs_one_member_run_per_tool_call`.execute(db);
  await db.schema.alterTable('runs').dropColumn('waiting_continue_request').execute();
  await db.schema.dropTable('run_continue_requests').ifExists().execute();
}
