/** Who waits in the model's line for a parked run: the run that asked (a member run, for a team), as it asked. */
export interface ParkedWaiter {
  /** The waiter's id in the line: that run's id. */
  id: string;
  /** '' for none. */
  tenant: string;
  priority: number;
}

/**
 * Thrown by a model request that got no permit within the capacity wait:
 * the execution stops at its last checkpoint and gives its worker slot back
 * (the run stays RUNNING, its job delayed `retryAfterMs`). Thrown up
 * through a team's delegation when a member parks: the whole tree parks.
 */
export class CapacityParkSignal extends Error {
  constructor(
    readonly runId: string,
    readonly model: string,
    /** When the limit expects room, in ms from now. */
    readonly retryAfterMs: number,
    /** How long the run has waited for this permit so far, across parks. */
    readonly waitedMs: number,
    /** Who waits in the model's line (the run whose request asked). */
    readonly waiter: ParkedWaiter,
  ) {
    super(`run ${runId} parked: no capacity for model ${model} for ${retryAfterMs} ms`);
    this.name = 'CapacityParkSignal';
  }
}
