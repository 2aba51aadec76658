import { sql } from 'kysely';
import type { Kysely } from 'kysely';

/**
 * Webhooks in order per run (issue #32): a delivery of a run's event waits while the run's earlier
 * event to the same endpoint is still to be delivered, and finds those earlier events by this index.
 * `if not exists`: a database migrated by a build that had it in `0026_webhooks` keeps its own.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index if not exists webhook_events_by_run on webhook_events (run_id, event_id) where run_id is not null`.execute(
    db,
  );
}

/** Drops the index: deliveries then scan for a run's earlier events. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists webhook_events_by_run`.execute(db);
}
