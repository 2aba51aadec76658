/**
 * `@cairn/store`: the Postgres store. `createDb` and `migrate` open and
 * prepare a database; `openStore` opens the store as its parts (writes,
 * reads, human in the loop, operations), typed on the engine's store port and
 * run-control ports, one `PostgresCheckpointStore` behind them all;
 * `ServedEntityCatalog`, retention and advisory locks are the operations the
 * apps run. Row and table types stay internal.
 */
/** @public */
export { createDb, type CreateDbOptions } from './create-db.js';
export { assertMigrated, migrate } from './migrate.js';
export { PostgresCheckpointStore } from './postgres-checkpoint-store.js';
/** @public */
export {
  PostgresModelCapacity,
  type PostgresModelCapacityOptions,
} from './model-capacity/postgres-model-capacity.js';
export { openStore } from './open-store.js';
/** @public The parts `openStore` returns. */
export type { StoreHitl, StoreOps, StoreParts, StoreReads, StoreWrites } from './store-parts.js';
/** @public The `browserSessions` of `StoreOps`. */
export type { BrowserSessionRevocations } from './browser-session-revocations.js';
export { isPostgresUnavailable } from './postgres-unavailable.js';
/** @public */
export {
  PostgresWebhookStore,
  type NewWebhookEndpoint,
  type WebhookAttemptRecord,
  type WebhookAttemptView,
  type WebhookDelivery,
  type WebhookEndpointChange,
  type WebhookEndpointView,
  type WebhookTarget,
} from './webhooks/postgres-webhook-store.js';
/** @public A write that emits a webhook event records it in its own transaction (docs/operations.md). */
export { recordWebhookEvent, type WebhookEventRecord } from './webhooks/record-webhook-event.js';
/** @public */
export { WEBHOOK_EVENT_TYPES, type WebhookEventType } from './webhooks/webhook-event-types.js';
/** @public */
export {
  ScheduleStore,
  type FiringRecord,
  type FiringSituationRead,
  type FiringView,
  type NewSchedule,
  type SchedulePatch,
  type ScheduleRecord,
  type ScheduleScope,
  type ScheduleTiming,
} from './schedules.js';
/** @public How a schedule's firing ended (`FiringRecord.outcome`). */
export type { FiringOutcome } from './schema.js';
/** @public */
export {
  ServedEntityCatalog,
  ENTITY_HEARTBEAT_MS,
  type ServedEntity,
  type ServedEntityAnnouncement,
} from './served-entities.js';
/** @public The options of `StoreOps.forceCancel`. */
export type { ForceCancelOptions } from './run-cancel.js';
export type { StoredEvent } from './run-events.js';
export type { RunTreeCursor, RunTreeEvents, RunTreeNode } from './run-tree-events.js';
export type {
  AttemptView,
  PendingActionView,
  RunSummaryView,
  RunView,
  RunViewOptions,
  SessionView,
  ToolCallView,
} from './run-view.js';
export {
  MIN_INPUT_SEARCH_CHARS,
  RUN_LIST_SORT_KEYS,
  SEARCHED_INPUT_CHARS,
  type RunListFilter,
  type RunListPage,
  type RunListSort,
  type RunListSortKey,
  type RunListWaitingFilter,
} from './run-list.js';
export { FINISHED_WINDOW_HOURS, type FleetOverview } from './fleet-overview.js';
/** @public The last hour of `FleetOverview`. */
export type { FleetHour, FleetMinute } from './fleet-hour.js';
export type { SessionKey } from './session-key.js';
export type { RunMessagesPage } from './run-messages-page.js';
/** @public The messages of a `RunMessagesPage`. */
export type { IndexedMessage } from './run-history.js';
export { MAX_INTEGER_COLUMN } from './integer-column.js';
// For what writes `runs` rows itself (fixtures, imports): the form `runs.usage` holds.
export { storedUsageJson } from './usage-column.js';
/** @public The errors a caller of the store catches (`StoreError` is their base). */
export {
  EntityNotServedError,
  MigrationError,
  RunAlreadyTerminalError,
  SessionHasForksError,
  SessionHasLiveRunsError,
  StoreError,
  StoreNotMigratedError,
} from './errors.js';
/** @public */
export { ADVISORY_LOCKS, type AdvisoryLockResult } from './advisory-lock.js';
/** @public */
export {
  DEFAULT_RETAIN_DAYS,
  retentionCutoff,
  type PruneOptions,
  type PruneResult,
} from './retention.js';
export { closeSearchChunks } from './search-chunks.js';
// The Kysely schema, for a caller that opens its own connection (the benchmarks); the table types stay internal.
export { RUN_STATE_SCHEMA_VERSION, type Database } from './schema.js';
