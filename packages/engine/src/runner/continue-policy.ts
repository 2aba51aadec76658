import { assertNever, RunNotContinuableError, RunNotFoundError } from '../errors.js';
import type { RunRecord } from '../run-types.js';

/** What a continue request does to a run. */
export type ContinueDecision =
  | { action: 'resume'; run: RunRecord }
  | { action: 'already-queued'; run: RunRecord }
  | { action: 'fork'; run: RunRecord };

/**
 * Applies DESIGN's status table: RUNNING and ERROR resume in place, PENDING is
 * already queued, COMPLETED forks only when asked, CANCELLED never continues.
 */
export function decideContinue(
  runId: string,
  run: RunRecord | undefined,
  options: { fork?: boolean },
): ContinueDecision {
  if (!run) throw new RunNotFoundError(runId);
  switch (run.status) {
    case 'RUNNING':
    case 'ERROR':
      return { action: 'resume', run };
    case 'PENDING':
      return { action: 'already-queued', run };
    case 'COMPLETED':
      if (options.fork) return { action: 'fork', run };
      throw new RunNotContinuableError(
        runId,
        run.status,
        'a completed run is not continued; pass fork: true to start a new run from its messages',
      );
    case 'CANCELLED':
      throw new RunNotContinuableError(runId, run.status, 'a cancelled run is not continuable');
    case 'PAUSED':
      throw new RunNotContinuableError(
        runId,
        run.status,
        'no tool of this version asks for approval, so a paused run cannot be resumed here',
      );
    default:
      return assertNever(run.status);
  }
}
