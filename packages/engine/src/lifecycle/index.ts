/**
 * `@cairn/engine/lifecycle`: the lifecycle's moves of a run and the job
 * intents they return, for the packages that carry them out (the queue, the
 * runtime's execution threads, the producer's facade). Apps that only define
 * and run agents never need it.
 */
export { assertNever } from '../errors.js';
export {
  dispositionOfError,
  serializeError,
  deserializeError,
  type SerializedError,
} from './error-disposition.js';
export type { Pickup, PickupOutcome } from './pickup-types.js';
export type { ContinueDecision } from './continue-rules.js';
export { CONTINUE_JOB_REASONS } from '../run-types.js';
export type { CapacityPark } from './execute-options.js';
export {
  continueIntents,
  createdRunIntents,
  type IntentResult,
  type JobIntent,
  type JobPort,
  type JobSpec,
} from './intents.js';
export { decideAndResume } from './decide-actions.js';
export { expireAndResume, pickupIntents } from './expire-actions.js';
/** @public */
export { recoveryIntents, type RecoveryOptions, type RecoveryPlan } from './recovery.js';
/** @public Each deadline a recovery pass ended (`RecoveryPlan.deadlines`). */
export type { DeadlineEnding } from './deadline.js';
export { cancelRun } from './cancel-run.js';
export { forkRefusalOf } from './fork-run.js';
/** @public */
export {
  firingMove,
  SCHEDULE_OVERLAPS,
  type FiringMove,
  type FiringSituation,
  type ScheduleOverlap,
} from './schedule-overlap.js';
/** @public */
export {
  resumeRun,
  suspendRun,
  SUSPEND_MOVE_BY_STATUS,
  type ResumeOutcome,
  type SuspendDeps,
  type SuspendOutcome,
} from './suspend-run.js';
