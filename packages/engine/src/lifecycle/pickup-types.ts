import type { ContinueJobReason } from '../run-types.js';
import type { RunStatus } from './run-status.js';
import type { CapacityPark } from './execute-options.js';

/** One pickup of a queued job, as plain data (it may cross a thread). */
export interface Pickup {
  /** The job kind: `run` (a new run) or `continue` (asked for, recovered, reconciled, handed over). */
  job: 'run' | 'continue';
  runId: string;
  /** A continue job's own reason. */
  reason?: ContinueJobReason;
  /** The queue's count of pickups of this job (1 on the first). */
  attemptsStarted: number;
  /** Set on a job handed back at shutdown: the pickup after it claims with reason `handover`. */
  handoverAttempt?: number;
  /** Set on a job parked for model capacity: the pickup after it claims with reason `capacity`. */
  parkedAttempt?: number;
  /** How long the run has waited for a model permit across its parks (ms). */
  capacityWaitedMs?: number;
}

/** How a pickup ended (shown as the job's return value where it completes the job). */
export type PickupOutcome =
  | { kind: 'finished'; status: RunStatus }
  | { kind: 'skipped'; status: RunStatus | 'not-found' }
  | { kind: 'cancelled-at-claim' }
  | { kind: 'handed-over' }
  /** Parked for model capacity: the queue delays the job `park.retryAfterMs` (the run stays RUNNING). */
  | { kind: 'parked'; park: CapacityPark }
  | { kind: 'lease-lost'; message: string };

/** Options of one pickup. */
export interface PickupOptions {
  /** Aborting it asks the execution to stop at its next checkpoint and hand the run back. */
  handover?: AbortSignal;
}
