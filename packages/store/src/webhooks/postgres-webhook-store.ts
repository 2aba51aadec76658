import { randomBytes } from 'node:crypto';
import { sql, type Kysely, type Selectable } from 'kysely';
import type { Database } from '../schema.js';
import type { WebhookAttemptsTable, WebhookEndpointsTable } from './webhook-tables.js';

/** How many attempts {@link PostgresWebhookStore.listAttempts} answers at most. */
const LISTED_ATTEMPTS = 50;

/** An endpoint as the API answers it: never its secret. */
export interface WebhookEndpointView {
  endpoint_id: string;
  tenant: string | null;
  url: string;
  /** The event types it takes; empty: every type. */
  events: string[];
  /** Only this entity's runs; null: every entity's. */
  entity: string | null;
  description: string;
  disabled: boolean;
  created_at: string;
  updated_at: string;
}

/** One delivery attempt as the API answers it. */
export interface WebhookAttemptView {
  /** The `webhook-id` receivers deduplicate on: the same for every attempt and redelivery of a message. */
  delivery_id: string;
  event_type: string;
  attempt: number;
  status_code: number | null;
  latency_ms: number;
  error: string | null;
  created_at: string;
}

/** What a new endpoint is. */
export interface NewWebhookEndpoint {
  tenantId: string | null;
  url: string;
  events: readonly string[];
  entityName?: string;
  description?: string;
}

/** What a PATCH may change. */
export interface WebhookEndpointChange {
  url?: string;
  events?: readonly string[];
  description?: string;
  disabled?: boolean;
}

/** One delivery to make: one event to one endpoint (a BullMQ job, `jobId` its id). */
export interface WebhookDelivery {
  /** Stable per (event, endpoint): the delivery job's id. */
  jobId: string;
  /** The `webhook-id` header: `msg_<event id>`, the same for every endpoint, retry and redelivery. */
  messageId: string;
  endpointId: string;
  type: string;
  runId: string | null;
  occurredAt: Date;
  payload: Record<string, unknown>;
  /** A manual redelivery: sent as asked, without waiting for the run's earlier events. */
  redelivery: boolean;
}

/** Where and how a delivery goes, read at each attempt (a changed URL or a disabled endpoint counts at once). */
export interface WebhookTarget {
  url: string;
  secret: string;
  disabled: boolean;
}

/** One attempt to record. */
export interface WebhookAttemptRecord {
  endpointId: string;
  messageId: string;
  eventType: string;
  attempt: number;
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
}

type EndpointRow = Omit<Selectable<WebhookEndpointsTable>, 'secret' | 'tenant_key'>;

const VIEW_COLUMNS = [
  'endpoint_id',
  'tenant_id',
  'url',
  'events',
  'entity_name',
  'description',
  'disabled',
  'created_at',
  'updated_at',
] as const satisfies readonly (keyof EndpointRow)[];

/** The message id of outbox event `eventId`. */
function messageIdOf(eventId: string): string {
  return `msg_${eventId}`;
}

/** The outbox event of message id `messageId` (`msg_<event id>`); undefined for another form. */
function eventIdOf(messageId: string): string | undefined {
  return /^msg_(\d{1,18})$/.exec(messageId)?.[1];
}

/** The delivery job's id of a message to an endpoint; a redelivery's names its own outbox row. */
function deliveryJobIdOf(
  messageId: string,
  endpointId: string,
  redeliveryEventId?: string,
): string {
  return redeliveryEventId === undefined
    ? `${messageId}.${endpointId}`
    : `${messageId}.${endpointId}.r${redeliveryEventId}`;
}

/** A new signing secret: `whsec_` and 32 random bytes in base64 (the Standard Webhooks form). */
function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

function viewOf(row: EndpointRow): WebhookEndpointView {
  return {
    endpoint_id: row.endpoint_id,
    tenant: row.tenant_id,
    url: row.url,
    events: row.events,
    entity: row.entity_name,
    description: row.description,
    disabled: row.disabled,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

function attemptViewOf(row: Selectable<WebhookAttemptsTable>): WebhookAttemptView {
  return {
    delivery_id: row.message_id,
    event_type: row.event_type,
    attempt: row.attempt,
    status_code: row.status_code,
    latency_ms: row.latency_ms,
    error: row.error,
    created_at: row.created_at.toISOString(),
  };
}

/**
 * Webhook endpoints, their outbox and their attempts in Postgres: what the API manages
 * (endpoints, attempts, redeliveries) and what the workers' dispatcher and deliveries use.
 */
export class PostgresWebhookStore {
  constructor(private readonly db: Kysely<Database>) {}

  /** Creates an endpoint; the answer holds its secret, the only time it is ever given. */
  async createEndpoint(
    endpoint: NewWebhookEndpoint,
  ): Promise<{ endpoint: WebhookEndpointView; secret: string }> {
    const secret = newSecret();
    const row = await this.db
      .insertInto('webhook_endpoints')
      .values({
        endpoint_id: `ep_${randomBytes(12).toString('hex')}`,
        tenant_id: endpoint.tenantId,
        url: endpoint.url,
        events: [...endpoint.events],
        entity_name: endpoint.entityName ?? null,
        description: endpoint.description ?? '',
        secret,
      })
      .returning(VIEW_COLUMNS)
      .executeTakeFirstOrThrow();
    return { endpoint: viewOf(row), secret };
  }

  /** The endpoints of `tenantId` (null: an admin key's), or every endpoint when `tenantId` is undefined. */
  async listEndpoints(tenantId?: string | null): Promise<WebhookEndpointView[]> {
    let query = this.db.selectFrom('webhook_endpoints').select(VIEW_COLUMNS);
    if (tenantId !== undefined) query = query.where('tenant_key', '=', tenantId ?? '');
    const rows = await query.orderBy('created_at').orderBy('endpoint_id').execute();
    return rows.map(viewOf);
  }

  /** One endpoint, or undefined. */
  async getEndpoint(endpointId: string): Promise<WebhookEndpointView | undefined> {
    const row = await this.db
      .selectFrom('webhook_endpoints')
      .select(VIEW_COLUMNS)
      .where('endpoint_id', '=', endpointId)
      .executeTakeFirst();
    return row && viewOf(row);
  }

  /** Changes an endpoint; undefined when it does not exist. */
  async updateEndpoint(
    endpointId: string,
    change: WebhookEndpointChange,
  ): Promise<WebhookEndpointView | undefined> {
    const row = await this.db
      .updateTable('webhook_endpoints')
      .set({
        ...(change.url !== undefined && { url: change.url }),
        ...(change.events !== undefined && { events: [...change.events] }),
        ...(change.description !== undefined && { description: change.description }),
        ...(change.disabled !== undefined && { disabled: change.disabled }),
        updated_at: sql<Date>`now()`,
      })
      .where('endpoint_id', '=', endpointId)
      .returning(VIEW_COLUMNS)
      .executeTakeFirst();
    return row && viewOf(row);
  }

  /** Deletes an endpoint with its attempts and pending redeliveries; false when it did not exist. */
  async deleteEndpoint(endpointId: string): Promise<boolean> {
    const result = await this.db
      .deleteFrom('webhook_endpoints')
      .where('endpoint_id', '=', endpointId)
      .executeTakeFirst();
    return result.numDeletedRows > 0n;
  }

  /** The endpoint's last attempts, newest first (at most {@link LISTED_ATTEMPTS}). */
  async listAttempts(endpointId: string, limit = LISTED_ATTEMPTS): Promise<WebhookAttemptView[]> {
    const rows = await this.db
      .selectFrom('webhook_attempts')
      .selectAll()
      .where('endpoint_id', '=', endpointId)
      .orderBy('attempt_id', 'desc')
      .limit(Math.min(limit, LISTED_ATTEMPTS))
      .execute();
    return rows.map(attemptViewOf);
  }

  /**
   * Queues message `deliveryId` again to `endpointId` alone, with its id and data (an outbox row the
   * dispatcher delivers like any other). False when the endpoint never had an attempt of it.
   */
  async redeliver(endpointId: string, deliveryId: string): Promise<boolean> {
    const eventId = eventIdOf(deliveryId);
    if (eventId === undefined) return false;
    const { rows } = await sql<{ event_id: string }>`
      insert into webhook_events (tenant_key, type, run_id, entity_name, payload, endpoint_id, message_id)
      select e.tenant_key, e.type, e.run_id, e.entity_name, e.payload, ${endpointId}, ${deliveryId}
        from webhook_events e
       where e.event_id = ${eventId}
         and exists (select 1 from webhook_attempts a
                      where a.endpoint_id = ${endpointId} and a.message_id = ${deliveryId})
      returning event_id::text`.execute(this.db);
    return rows.length > 0;
  }

  /**
   * Turns up to `limit` outbox events into deliveries, in event order, and marks them dispatched,
   * in one transaction that holds their rows (`for update skip locked`): dispatchers run
   * concurrently, each taking other rows. `deliver` adds the jobs; when it throws, nothing is marked
   * and the events are taken again later (a delivery job's id is stable, so none is added twice).
   * Returns how many events were taken.
   */
  async dispatchPending(
    limit: number,
    deliver: (deliveries: WebhookDelivery[]) => Promise<void>,
  ): Promise<number> {
    return this.db.transaction().execute(async (trx) => {
      const { rows } = await sql<{
        event_id: string;
        type: string;
        run_id: string | null;
        payload: Record<string, unknown>;
        message_id: string | null;
        created_at: Date;
        endpoint_ids: string[] | null;
        redelivery: boolean;
      }>`
        with taken as (
          select event_id from webhook_events
           where dispatched_at is null order by event_id limit ${limit} for update skip locked)
        select e.event_id::text, e.type, e.run_id, e.payload, e.message_id, e.created_at,
               e.endpoint_id is not null as redelivery,
               case when e.endpoint_id is not null then array[e.endpoint_id]
                    else (select array_agg(p.endpoint_id order by p.endpoint_id) from webhook_endpoints p
                           where p.tenant_key = e.tenant_key and not p.disabled
                             and (cardinality(p.events) = 0 or e.type = any (p.events))
                             and (p.entity_name is null or p.entity_name = e.entity_name)) end as endpoint_ids
          from webhook_events e join taken using (event_id)
         order by e.event_id`.execute(trx);
      if (rows.length === 0) return 0;
      const deliveries = rows.flatMap((row) =>
        (row.endpoint_ids ?? []).map((endpointId) => {
          const messageId = row.message_id ?? messageIdOf(row.event_id);
          return {
            jobId: deliveryJobIdOf(
              messageId,
              endpointId,
              row.redelivery ? row.event_id : undefined,
            ),
            messageId,
            endpointId,
            type: row.type,
            runId: row.run_id,
            occurredAt: row.created_at,
            payload: row.payload,
            redelivery: row.redelivery,
          };
        }),
      );
      if (deliveries.length > 0) await deliver(deliveries);
      await trx
        .updateTable('webhook_events')
        .set({ dispatched_at: sql<Date>`now()` })
        .where(
          'event_id',
          'in',
          rows.map((r) => r.event_id),
        )
        .execute();
      return rows.length;
    });
  }

  /**
   * The jobs of the first deliveries to `endpointId` of the run's events recorded before message
   * `messageId`, oldest first (redeliveries aside): a delivery of a run's event waits until these
   * are delivered or given up. `dispatched` false: the event is not yet turned into jobs (its job
   * may not exist yet, or may exist with its event not yet marked). Events the endpoint did not
   * take have no job.
   */
  async earlierDeliveries(
    runId: string,
    messageId: string,
    endpointId: string,
  ): Promise<{ jobId: string; dispatched: boolean }[]> {
    const eventId = eventIdOf(messageId);
    if (eventId === undefined) return [];
    const rows = await this.db
      .selectFrom('webhook_events')
      .select([sql<string>`event_id::text`.as('event_id'), 'dispatched_at'])
      .where('run_id', '=', runId)
      .where('endpoint_id', 'is', null)
      .where(sql<boolean>`event_id < ${eventId}::bigint`)
      .orderBy('event_id')
      .execute();
    return rows.map((r) => ({
      jobId: deliveryJobIdOf(messageIdOf(r.event_id), endpointId),
      dispatched: r.dispatched_at !== null,
    }));
  }

  /** Where a delivery to `endpointId` goes now; undefined once the endpoint is deleted. */
  async deliveryTarget(endpointId: string): Promise<WebhookTarget | undefined> {
    return this.db
      .selectFrom('webhook_endpoints')
      .select(['url', 'secret', 'disabled'])
      .where('endpoint_id', '=', endpointId)
      .executeTakeFirst();
  }

  /** Records one delivery attempt (the endpoint deleted meanwhile: nothing). */
  async recordAttempt(attempt: WebhookAttemptRecord): Promise<void> {
    await sql`
      insert into webhook_attempts (endpoint_id, message_id, event_type, attempt, status_code, latency_ms, error)
      select ${attempt.endpointId}, ${attempt.messageId}, ${attempt.eventType}, ${attempt.attempt},
             ${attempt.statusCode}, ${Math.round(attempt.latencyMs)}, ${attempt.error}
       where exists (select 1 from webhook_endpoints where endpoint_id = ${attempt.endpointId})`.execute(
      this.db,
    );
  }
}
