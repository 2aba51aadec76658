import type { ClockBook } from './clock-book.js';
import {
  assignSlot,
  parseTenantClock,
  queuePriorityOf,
  REBASE_AFTER_SLOT,
  slotOfQueuePriority,
} from './fair-share.js';

/** How often an enqueue reads and swaps its tenant's clock again when another enqueue of the tenant moved it first. */
const MAX_SWAPS = 50;

/** The tenant key of runs without a tenant (an admin key's): one tenant of their own. */
const NO_TENANT = '';

/**
 * The queue's fair line: the BullMQ priority of a tenant's new job, from its
 * virtual clock (`fair-share.ts`) kept in the queue's {@link ClockBook}, in
 * two round trips (read, compare-and-set). The fleet's virtual time is the
 * slot of the first job waiting with a priority (BullMQ's own order), or the
 * largest slot given when none waits; when none waits and the clocks have
 * gone past {@link REBASE_AFTER_SLOT}, they start again from 0. Jobs queued
 * before fair dispatch carry the run's priority (1 to 10), read as slot 0.
 */
export class FairLine {
  constructor(
    private readonly book: ClockBook,
    /** `CAIRN_TENANT_WEIGHTS`; a tenant not listed weighs 1. */
    private readonly weights: Readonly<Record<string, number>> = {},
  ) {}

  /** The BullMQ priority of a new job of `tenant` (null: an admin key's run) with the run's `priority` (1 highest to 10). */
  async queuePriorityFor(tenant: string | null, priority: number): Promise<number> {
    const key = tenant ?? NO_TENANT;
    const weight = (tenant !== null && this.weights[tenant]) || 1;
    for (let attempt = 0; attempt < MAX_SWAPS; attempt++) {
      let { clock, lastSlot, firstWaitingPriority } = await this.book.read(key);
      if (
        firstWaitingPriority === undefined &&
        lastSlot !== undefined &&
        lastSlot >= REBASE_AFTER_SLOT
      ) {
        await this.book.clear(lastSlot);
        ({ clock, lastSlot, firstWaitingPriority } = await this.book.read(key));
      }
      const head =
        firstWaitingPriority === undefined ? undefined : slotOfQueuePriority(firstWaitingPriority);
      const fleetTime = head ?? lastSlot ?? 0;
      const next = assignSlot(parseTenantClock(clock), { fleetTime, weight, priority });
      if (await this.book.swap(key, clock, JSON.stringify(next.clock), next.slot))
        return queuePriorityOf(next.slot, priority);
    }
    throw new Error(
      `tenant "${key}": its virtual clock was moved by other enqueues ${MAX_SWAPS} times in a row`,
    );
  }

  /** Releases the clock book's connections. */
  close(): Promise<void> {
    return this.book.close();
  }
}
