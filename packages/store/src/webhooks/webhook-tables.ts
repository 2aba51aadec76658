import type { ColumnType, Generated, GeneratedAlways } from 'kysely';

/** The `webhook_endpoints` table: a tenant's webhook endpoints, each with its signing secret (`0026_webhooks`). */
export interface WebhookEndpointsTable {
  endpoint_id: string;
  /** The tenant whose runs it hears of; null: an admin key's (runs without a tenant). */
  tenant_id: ColumnType<string | null, string | null | undefined, never>;
  /** `tenant_id`, or '' for none (derived by Postgres). */
  tenant_key: GeneratedAlways<string>;
  url: string;
  /** The event types it takes; empty: every type. */
  events: ColumnType<string[], string[] | undefined, string[]>;
  /** Only the runs of this entity (by name); null: every entity. */
  entity_name: ColumnType<string | null, string | null | undefined, never>;
  description: Generated<string>;
  /** `whsec_` and the base64 key: read by the deliveries only, never answered after creation. */
  secret: ColumnType<string, string, never>;
  disabled: Generated<boolean>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

/** The `webhook_events` table: the outbox, one row per event some enabled endpoint takes. */
export interface WebhookEventsTable {
  event_id: Generated<string>;
  tenant_key: string;
  type: string;
  run_id: string | null;
  entity_name: string | null;
  payload: ColumnType<Record<string, unknown>, string, never>;
  /** A redelivery's: the one endpoint it goes to; null: every endpoint that takes it. */
  endpoint_id: string | null;
  /** A redelivery's: the message it sends again; null: `msg_<event_id>`. */
  message_id: string | null;
  created_at: Generated<Date>;
  dispatched_at: Date | null;
}

/** The `webhook_attempts` table: one row per delivery attempt. */
export interface WebhookAttemptsTable {
  attempt_id: Generated<string>;
  endpoint_id: string;
  message_id: string;
  event_type: string;
  /** 1 for the first attempt of a delivery. */
  attempt: number;
  /** The receiver's HTTP status; null: no answer (refused target, timeout, connection error). */
  status_code: number | null;
  latency_ms: number;
  error: string | null;
  created_at: Generated<Date>;
}
