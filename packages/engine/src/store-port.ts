/**
 * `@cairn/engine/store`: the persistence port the engine runs on, for
 * `CheckpointStore` implementations (`@cairn/store` is the Postgres one).
 * Apps that only define and run agents never need it.
 */
export type { CheckpointStore, CheckpointDelta, Claim, ClaimRequest, RunHistory, RunLease, RunOutcome } from './checkpoint-store.js';
export { EMPTY_USAGE, addUsage } from './messages.js';
export { idempotencyKeyFor } from './tool-call-outcome.js';
export { backoffDelay } from './runner/model-retry.js';
export { validateDecision } from './hitl/validate-decision.js';
export type { CancelStore, DecisionStore, DecisionValidator, ExpiryOutcome, RecoveryStore, RunCursor } from './run-control-store.js';
// The lifecycle's rules a store's compare-and-set statements are built from.
export { judgeDecision, normalizeDecision, resumeWhenDecided, type DecidedTree, type DecisionContext, type DecisionVerdict } from './lifecycle/decide-actions.js';
export { expiryMoveOf, type ExpiryMove } from './lifecycle/expire-actions.js';
