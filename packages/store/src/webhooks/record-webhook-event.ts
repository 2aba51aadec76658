import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../schema.js';
import type { WebhookEventType } from './webhook-event-types.js';

/** An event to notify: its tenant (null: an admin key's), type, run and entity when it has them, and its data. */
export interface WebhookEventRecord {
  tenantId: string | null;
  type: WebhookEventType;
  runId?: string;
  /** The entity the event is about, for endpoints that take one entity's events only. */
  entityName?: string;
  /** The event's `data` as receivers get it (JSON). */
  payload: Record<string, unknown>;
}

/**
 * Records a webhook event in the outbox, in the caller's transaction (`trx`), so the event is
 * committed with the change that causes it and lost with it: the same rule as the `runs` trigger
 * (`cairn_webhook_record`): nothing is written unless an enabled endpoint of the tenant takes the
 * type (and the entity). Returns the event's id, or null when nobody takes it.
 *
 * @example
 * await db.transaction().execute(async (trx) => {
 *   await markFiringSkipped(trx, firing);
 *   await recordWebhookEvent(trx, { tenantId, type: 'schedule.run_skipped', payload: { schedule_id } });
 * });
 */
export async function recordWebhookEvent(
  trx: Kysely<Database> | Transaction<Database>,
  event: WebhookEventRecord,
): Promise<string | null> {
  const { rows } = await sql<{ event_id: string | null }>`
    select cairn_webhook_record(${event.tenantId ?? ''}, ${event.type}, ${event.runId ?? null},
      ${event.entityName ?? null}, ${JSON.stringify(event.payload)}::jsonb)::text as event_id`.execute(
    trx,
  );
  return rows[0]?.event_id ?? null;
}
