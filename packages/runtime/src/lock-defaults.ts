/**
 * BullMQ lock duration by default: a dead worker's run resumes elsewhere
 * after about this plus one stalled interval. Safe this short because runs
 * execute in threads of their own: the thread renewing locks never blocks.
 */
export const DEFAULT_LOCK_MS = 1000;

/** How often BullMQ looks for stalled jobs by default. */
export const DEFAULT_STALLED_INTERVAL_MS = 250;

/**
 * How often an execution re-reads its run row (epoch, cancel) under a job
 * lock of `lockMs`: twice a lock, at least every 100 ms apart, so a run
 * taken over by another worker is seen to be lost well before the lock
 * would have run out.
 */
export function leaseCheckMsFor(lockMs: number): number {
  return Math.max(100, Math.floor(lockMs / 2));
}
