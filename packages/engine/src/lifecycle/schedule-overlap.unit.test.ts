import { describe, expect, it } from 'vitest';
import { RUN_STATUSES, type RunStatus } from './run-status.js';
import { firingMove, SCHEDULE_OVERLAPS } from './schedule-overlap.js';

/** Unfinished previous runs; null: its firing started and its run is still being created. */
const UNFINISHED: readonly (RunStatus | null)[] = ['PENDING', 'RUNNING', 'PAUSED', null];

describe('firingMove: what a firing does while the schedule’s previous run is unfinished', () => {
  it('with no previous run, or a finished one, every policy starts', () => {
    for (const overlap of SCHEDULE_OVERLAPS)
      for (const previousStatus of [undefined, 'COMPLETED', 'ERROR', 'CANCELLED'] as const)
        expect(firingMove({ overlap, previousStatus, otherBuffered: false })).toBe('start');
  });

  it('an unfinished previous run (PAUSED for a person, or still being created, included): skip skips, buffer_one buffers, allow starts', () => {
    for (const previousStatus of UNFINISHED) {
      expect(firingMove({ overlap: 'skip', previousStatus, otherBuffered: false })).toBe('skip');
      expect(firingMove({ overlap: 'buffer_one', previousStatus, otherBuffered: false })).toBe(
        'buffer',
      );
      expect(firingMove({ overlap: 'allow', previousStatus, otherBuffered: false })).toBe('start');
    }
  });

  it('buffer_one keeps one firing waiting: while another waits, the next is skipped', () => {
    for (const previousStatus of RUN_STATUSES)
      expect(firingMove({ overlap: 'buffer_one', previousStatus, otherBuffered: true })).toBe(
        'skip',
      );
  });
});
