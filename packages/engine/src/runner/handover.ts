/**
 * Thrown up through a team's delegation when a member run stopped at a
 * checkpoint to hand its work back (graceful shutdown): the team stops too,
 * without committing its unfinished batch.
 */
export class HandoverSignal extends Error {
  constructor(readonly runId: string) {
    super(`run ${runId} was handed back at a checkpoint`);
    this.name = 'HandoverSignal';
  }
}
