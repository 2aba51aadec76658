import type { RunJobOutcome, RunJobRequest } from './run-job.js';

/** One execution in flight. */
export interface RunExecution {
  outcome: Promise<RunJobOutcome>;
}

/**
 * Where a worker's runs execute: in its own thread ({@link createInlineExecutor})
 * or in execution threads ({@link createThreadExecutor}), so that a tool that
 * blocks the event loop cannot stop BullMQ from renewing the job locks.
 */
export interface RunExecutor {
  execute(request: RunJobRequest): RunExecution;
  /** Asks every execution in flight, and every later one, to stop at its next checkpoint. */
  handoverAll(): void;
  /** Releases connections and threads. */
  close(): Promise<void>;
}
