/**
 * Thrown anywhere inside an execution (a tool batch with calls that wait for
 * a person, a member run that paused) to end it with the run PAUSED: the
 * lifecycle turns it into the `pause` transition (`lifecycle/run-ending.ts`).
 * A paused run holds no worker: the execution's finish writes PAUSED with
 * whatever is pending, the job completes, and only a `resumeFromPause` claim
 * takes the run again.
 */
export class PauseSignal extends Error {
  constructor(
    readonly runId: string,
    /** Carried into the `RunPaused` event (for example the pending actions). */
    readonly data: Record<string, unknown> = {},
    /** The event the PAUSED finish stores: `RunSuspended` for a suspend at a checkpoint boundary. */
    readonly eventType: 'RunPaused' | 'RunSuspended' = 'RunPaused',
  ) {
    super(`run ${runId} paused`);
    this.name = 'PauseSignal';
  }
}
