/**
 * BullMQ lock duration by default: a dead worker's run resumes elsewhere
 * after about this plus one stalled interval. Safe this short because runs
 * execute in threads of their own: the thread renewing locks never blocks.
 */
export const DEFAULT_LOCK_MS = 1000;

/** How often BullMQ looks for stalled jobs by default. */
export const DEFAULT_STALLED_INTERVAL_MS = 250;
