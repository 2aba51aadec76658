export { createDb, DEFAULT_IDLE_IN_TRANSACTION_TIMEOUT_MS } from './create-db.js';
export type { CreateDbOptions } from './create-db.js';
export { assertMigrated, migrate, MIGRATIONS } from './migrate.js';
export { PostgresCheckpointStore } from './postgres-checkpoint-store.js';
export { BrowserSessionRevocations } from './browser-session-revocations.js';
export { isPostgresUnavailable } from './postgres-unavailable.js';
export { ServedEntityCatalog, ENTITY_HEARTBEAT_MS, type ServedEntity, type ServedEntityAnnouncement } from './served-entities.js';
export type { ForceCancelOptions } from './run-cancel.js';
export type { NewRunEvent, StoredEvent } from './run-events.js';
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
export type { RunListFilter, RunListPage } from './run-list.js';
export type { SessionKey } from './session-key.js';
export type { IndexedMessage, RunMessagesPage } from './run-messages-page.js';
export { EntityNotServedError, MigrationError, RunAlreadyTerminalError, SessionHasLiveRunsError, StoreError, StoreNotMigratedError } from './errors.js';
export { ADVISORY_LOCKS, withAdvisoryLock, type AdvisoryLockResult } from './advisory-lock.js';
export {
  DEFAULT_PRUNE_BATCH,
  DEFAULT_RETAIN_DAYS,
  pruneFinishedRuns,
  retentionCutoff,
  type PruneOptions,
  type PruneResult,
} from './retention.js';
export type * from './schema.js';
export { RUN_STATE_SCHEMA_VERSION } from './schema.js';
export { toPendingActionRecord } from './pending-actions.js';
