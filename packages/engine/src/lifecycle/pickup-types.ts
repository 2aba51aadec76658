import type { AttemptReason } from '../run-types.js';
import type { RunStatus } from './run-status.js';

/** One pickup of a queued job, as plain data (it may cross a thread). */
export interface Pickup {
  /** The job kind: `run` (a new run) or `continue` (asked for, recovered, reconciled, handed over). */
  job: 'run' | 'continue';
  runId: string;
  /** A continue job's own reason. */
  reason?: Exclude<AttemptReason, 'run'>;
  /** The queue's count of pickups of this job (1 on the first). */
  attemptsStarted: number;
  /** Set on a job handed back at shutdown: the pickup after it claims with reason `handover`. */
  handoverAttempt?: number;
}

/** How a pickup ended (shown as the job's return value where it completes the job). */
export type PickupOutcome =
  | { kind: 'finished'; status: RunStatus }
  | { kind: 'skipped'; status: RunStatus | 'not-found' }
  | { kind: 'cancelled-at-claim' }
  | { kind: 'handed-over' }
  | { kind: 'lease-lost'; message: string };

/** Options of one pickup. */
export interface PickupOptions {
  /** Aborting it asks the execution to stop at its next checkpoint and hand the run back. */
  handover?: AbortSignal;
}
