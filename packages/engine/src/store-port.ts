/**
 * `@cairn/engine/store`: the persistence port the engine runs on, for
 * `CheckpointStore` implementations (`@cairn/store` is the Postgres one).
 * Apps that only define and run agents never need it.
 */
export type {
  CheckpointStore,
  CheckpointDelta,
  Claim,
  ClaimRequest,
  RunHistory,
  RunLease,
  RunOutcome,
} from './checkpoint-store.js';
export { validateDecision } from './hitl/validate-decision.js';
export type { TreeResume } from './hitl/pending-action.js';
// A call's default idempotency key: a store may leave it out of what it stores.
export { idempotencyKeyFor } from './tool-call-outcome.js';
/** @public The control ports a store implements (`RecoveryPort` extends `RecoveryStore`). */
export type {
  CancelStore,
  DecisionStore,
  DecisionValidator,
  ExclusiveResult,
  ExpiryOutcome,
  RecoveryPort,
  RecoveryStore,
  RunCursor,
  RunPastDeadline,
} from './run-control-store.js';
// The lifecycle's rules a store's compare-and-set statements are built from.
/** @public */
export {
  judgeDecision,
  normalizeDecision,
  resumeWhenDecided,
  type DecidedTree,
  type DecisionContext,
  type DecisionVerdict,
} from './lifecycle/decide-actions.js';
/** @public */
export { expiryMoveOf, type ExpiryMove } from './lifecycle/expire-actions.js';
// What the store's rows and statements are typed and built from.
export { assertNever, ContinueArrivedError } from './errors.js';
export type {
  AttemptReason,
  ContinueRequestRecord,
  EntityRef,
  IdempotencyClaim,
  NewRun,
  RunWaiting,
} from './run-types.js';
export type { Budget } from './spend/budget-option.js';
/** @public */
export { budgetApproval, type BudgetApproval } from './spend/budget.js';
export type { TenantDaySpend } from './spend/tenant-budget.js';
export type { EntityCatalog, EntityInfo } from './entity-catalog.js';
export type { EntityCaps } from './entity-caps.js';
export { isEntityPath, runEntityPath } from './entity-path.js';
export { DEFAULT_CHECKPOINT_MODE } from './entity.js';
export {
  RUN_TRANSITIONS,
  EXECUTING_STATUS,
  CLAIMABLE_STATUSES,
  CLAIM_CONDITIONS,
  CLAIM_CONDITION_BY_STATUS,
  FINISH_WAITS_FOR_CONTINUE,
  type ClaimCondition,
  type FinishStatus,
} from './lifecycle/run-status.js';
export { interruptedToolResult } from './lifecycle/open-tool-calls.js';
export { suspendMoveOf, type SuspendOutcome, type SuspendStore } from './lifecycle/suspend-run.js';
export { suspendedEventData } from './suspension.js';
