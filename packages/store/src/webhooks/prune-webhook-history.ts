import { sql, type Kysely } from 'kysely';
import type { Database } from '../schema.js';

/**
 * Deletes the webhook outbox's dispatched events and the delivery attempts recorded before
 * `olderThan`, `batchSize` rows per statement, oldest first (retention, beside finished runs).
 * An event not yet dispatched is kept whatever its age. Returns how many rows went.
 */
export async function pruneWebhookHistory(
  db: Kysely<Database>,
  olderThan: Date,
  batchSize: number,
): Promise<number> {
  let deleted = 0;
  for (const statement of [
    sql<{ n: number }>`with gone as (
        delete from webhook_events where event_id in (
          select event_id from webhook_events
           where dispatched_at is not null and created_at < ${olderThan}
           order by event_id limit ${batchSize})
        returning 1)
      select count(*)::int as n from gone`,
    sql<{ n: number }>`with gone as (
        delete from webhook_attempts where attempt_id in (
          select attempt_id from webhook_attempts
           where created_at < ${olderThan} order by attempt_id limit ${batchSize})
        returning 1)
      select count(*)::int as n from gone`,
  ]) {
    for (;;) {
      const n = (await statement.execute(db)).rows[0]?.n ?? 0;
      deleted += n;
      if (n < batchSize) break;
    }
  }
  return deleted;
}
