import type { RunStatus } from './run-status.js';
import { assertNever } from '../errors.js';
import { FINAL_STATUSES } from './run-status.js';

/** What a schedule may do with a firing while its previous run is unfinished (Temporal's overlap policies, three of them). */
export const SCHEDULE_OVERLAPS = ['skip', 'allow', 'buffer_one'] as const;

/** A schedule's overlap policy: `skip` the firing, `allow` it to start beside the previous run, or `buffer_one` (start it once the previous run ends; at most one waits). */
export type ScheduleOverlap = (typeof SCHEDULE_OVERLAPS)[number];

/** What a firing does now: start a run, record itself skipped, or wait buffered for the previous run to end. */
export type FiringMove = 'start' | 'skip' | 'buffer';

/** What the overlap rule reads when a firing comes (or a buffered one looks again). */
export interface FiringSituation {
  overlap: ScheduleOverlap;
  /**
   * The status of the schedule's last started run; undefined: none (or it was deleted); null: its
   * firing started and its run is still being created (unfinished, as a PENDING run).
   */
  previousStatus: RunStatus | null | undefined;
  /** Another firing of the schedule is buffered already (not this one). */
  otherBuffered: boolean;
}

/**
 * The one overlap rule of schedules. A previous run is unfinished until it reaches a final status
 * (COMPLETED, ERROR, CANCELLED): a PAUSED run waiting for a person holds its schedule too.
 * `buffer_one` keeps at most one firing waiting: while one waits, the next is skipped.
 */
export function firingMove(situation: FiringSituation): FiringMove {
  const { overlap, previousStatus } = situation;
  const unfinished =
    previousStatus === null ||
    (previousStatus !== undefined && !FINAL_STATUSES.includes(previousStatus));
  switch (overlap) {
    case 'allow':
      return 'start';
    case 'skip':
      return unfinished ? 'skip' : 'start';
    case 'buffer_one':
      if (situation.otherBuffered) return 'skip';
      return unfinished ? 'buffer' : 'start';
    default:
      return assertNever(overlap);
  }
}
