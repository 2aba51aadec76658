/**
 * `@cairn/engine/store`: the persistence port the engine runs on, for
 * `CheckpointStore` implementations (`@cairn/store` is the Postgres one).
 * Apps that only define and run agents never need it.
 */
export type { CheckpointStore, CheckpointDelta, Claim, ClaimRequest, RunHistory, RunLease, RunOutcome } from './checkpoint-store.js';
export { EMPTY_USAGE, addUsage } from './messages.js';
export { idempotencyKeyFor } from './runner/execute-tool-batch.js';
export { backoffDelay } from './runner/model-retry.js';
export { validateDecision } from './hitl/validate-decision.js';
