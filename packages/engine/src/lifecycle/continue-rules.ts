import { assertNever, RunNotContinuableError, RunNotFoundError } from '../errors.js';
import type { RunRecord } from '../run-types.js';
import { deadlinePassed } from './deadline.js';
import { RUN_STATUSES, type RunStatus } from './run-status.js';

/** What a continue request does to a run. */
export type ContinueDecision =
  | { action: 'resume'; run: RunRecord }
  | { action: 'already-queued'; run: RunRecord }
  | { action: 'fork'; run: RunRecord };

/**
 * The status table for `continue` (docs/http-api.md, `POST /v1/runs/:run_id/continue`): `resume` in place, `already-queued`
 * (a no-op), `fork-only` (refused unless `fork: true`), or `refuse`.
 */
export const CONTINUE_RULES = {
  RUNNING: 'resume',
  ERROR: 'resume',
  PENDING: 'already-queued',
  COMPLETED: 'fork-only',
  CANCELLED: 'refuse',
  PAUSED: 'refuse',
} as const satisfies Record<RunStatus, 'resume' | 'already-queued' | 'fork-only' | 'refuse'>;

/** Statuses a continue resumes in place; its request is stored only while the run is in one of them. */
export const CONTINUE_IN_PLACE_STATUSES: readonly RunStatus[] = RUN_STATUSES.filter(
  (s) => CONTINUE_RULES[s] === 'resume',
);

/**
 * Applies {@link CONTINUE_RULES} to a run: RUNNING and ERROR resume in place
 * (past its deadline only with a new `deadlineMs`),
 * PENDING is already queued (refused with an input, which it would drop), COMPLETED forks only when asked, CANCELLED never
 * continues, PAUSED resumes by itself once its pending actions are decided. `upgrade` (resume on a changed
 * definition) applies to a resume in place only: refused on a queued run and with a fork, never ignored.
 */
export function decideContinue(
  runId: string,
  run: RunRecord | undefined,
  options: { fork?: boolean; input?: string; upgrade?: boolean; deadlineMs?: number },
  now: Date,
): ContinueDecision {
  if (!run) throw new RunNotFoundError(runId);
  const rule = CONTINUE_RULES[run.status];
  switch (rule) {
    case 'resume':
      // Resumed past its deadline it would only end again at once: it needs a new one.
      if (options.deadlineMs === undefined && deadlinePassed(run, now)) {
        throw new RunNotContinuableError(
          runId,
          run.status,
          `its deadline passed at ${run.deadlineAt!.toISOString()}; continue with deadline_ms to give it a new one, counted from the continue`,
        );
      }
      return { action: 'resume', run };
    case 'already-queued':
      // A queued run has no turn to continue yet: its input would be dropped, so it is refused, never ignored.
      if (options.input?.trim()) {
        throw new RunNotContinuableError(
          runId,
          run.status,
          'it has not started yet, so a continue input has nothing to follow; send it once the run is RUNNING or has ended',
        );
      }
      if (options.upgrade) {
        throw new RunNotContinuableError(
          runId,
          run.status,
          'it has not started yet, so there is nothing to upgrade; a queued run no worker with its definition takes ends in ERROR after CAIRN_VERSION_GRACE_MS, and can be continued with upgrade then',
        );
      }
      if (options.deadlineMs !== undefined) {
        throw new RunNotContinuableError(
          runId,
          run.status,
          'it has not started yet, so its deadline still counts from its creation; a queued run past its deadline ends in ERROR and can be continued with deadline_ms then',
        );
      }
      return { action: 'already-queued', run };
    case 'fork-only':
      if (options.fork && options.upgrade) {
        throw new RunNotContinuableError(
          runId,
          run.status,
          'a fork always starts on the current definition; drop upgrade, which applies to a run resumed in place',
        );
      }
      if (options.fork) return { action: 'fork', run };
      throw new RunNotContinuableError(
        runId,
        run.status,
        'a completed run is not continued; pass fork: true to start a new run from its messages',
      );
    case 'refuse':
      throw new RunNotContinuableError(runId, run.status, refusal(run.status));
    default:
      return assertNever(rule);
  }
}

function refusal(status: RunStatus): string {
  return status === 'PAUSED'
    ? 'a paused run resumes by itself once its pending actions are decided'
    : 'a cancelled run is not continuable';
}
