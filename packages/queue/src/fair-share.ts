/**
 * The arithmetic of fair dispatch across tenants (start-time fair queuing on
 * BullMQ priorities): every tenant has a virtual clock that a queued run
 * advances by 1 / its tenant's weight; the run's slot (its virtual start,
 * never behind the fleet's current virtual time) becomes its BullMQ priority,
 * so BullMQ itself serves tenants round robin by weight. Within a tenant,
 * `priority` then age order its runs: a run of higher priority takes a slot
 * ahead of its tenant's waiting runs of lower priority (at most
 * {@link OVERTAKE_SLOTS} slots before its tenant's line end, and the slots it
 * borrows are given back by the tenant's later runs), never another tenant's.
 * Pure functions: where the clocks live is `fair-line.ts`'s concern.
 */

/** Run priorities: 1 (highest) to 10. */
export const PRIORITY_LEVELS = 10;

/**
 * How many slots before its tenant's line end a run of higher priority may
 * take (ahead of its tenant's own lower-priority runs): how far a tenant may
 * run ahead of its share at any moment, paid back by its later runs.
 */
export const OVERTAKE_SLOTS = 8;

/** BullMQ's largest job priority (2^21); 0 means none. */
export const MAX_QUEUE_PRIORITY = 2 ** 21;

/** The last whole slot a BullMQ priority can express; later slots share it (FIFO within priority). */
export const MAX_SLOT = Math.floor((MAX_QUEUE_PRIORITY - PRIORITY_LEVELS) / PRIORITY_LEVELS);

/**
 * Past this slot, the clocks start again from 0 the next time nothing waits
 * in the queue (no waiting run holds a slot then, so none is overtaken).
 */
export const REBASE_AFTER_SLOT = 1000;

/** Below any step a weight gives (1 / weight), above the rounding of a sum of steps. */
const SLOT_EPSILON = 1e-9;

/** A tenant's virtual clock. */
export interface TenantClock {
  /** The tenant's next fair slot: its clock. */
  next: number;
  /**
   * `tails[p - 1]`: the slot of the tenant's latest run of priority `p` or
   * higher (`null`: none since the clocks started).
   */
  tails: (number | null)[];
}

/** What {@link assignSlot} is asked. */
export interface SlotRequest {
  /** The fleet's virtual time: the slot of the first run waiting, or the last slot given when none waits. */
  fleetTime: number;
  /** The tenant's weight (`CAIRN_TENANT_WEIGHTS`), above 0. */
  weight: number;
  /** The run's priority, 1 (highest) to 10. */
  priority: number;
}

/**
 * The slot of a tenant's new run, and its clock after it. Nothing of the
 * tenant waits: its next slot. Only runs of lower priority wait: ahead of
 * them, at most {@link OVERTAKE_SLOTS} before its line end. Runs of lower
 * priority wait behind its latest run of this priority or higher: that run's
 * slot (after it, ahead of them). Otherwise the end of its line.
 */
export function assignSlot(
  clock: TenantClock | undefined,
  request: SlotRequest,
): { slot: number; clock: TenantClock } {
  const { fleetTime, weight, priority } = request;
  if (!(weight > 0)) throw new RangeError(`weight must be above 0, got ${weight}`);
  if (!(Number.isInteger(priority) && priority >= 1 && priority <= PRIORITY_LEVELS))
    throw new RangeError(
      `priority must be an integer from 1 to ${PRIORITY_LEVELS}, got ${priority}`,
    );
  const step = 1 / weight;
  const next = Math.max(clock?.next ?? 0, fleetTime);
  const tails = clock?.tails ?? Array<number | null>(PRIORITY_LEVELS).fill(null);
  const waiting = (tail: number | null | undefined): tail is number =>
    tail !== null && tail !== undefined && tail >= fleetTime;
  const tail = tails[priority - 1];
  const lastTail = tails[PRIORITY_LEVELS - 1];
  const earliest = Math.max(fleetTime, next - OVERTAKE_SLOTS * step);
  let slot: number;
  if (!waiting(lastTail)) slot = next;
  else if (!waiting(tail)) slot = earliest;
  else if (tail < lastTail) slot = Math.max(earliest, tail);
  else slot = Math.max(tail + step, next);
  return {
    slot,
    clock: {
      next: next + step,
      tails: tails.map((t, i) => (i >= priority - 1 ? Math.max(t ?? slot, slot) : t)),
    },
  };
}

/**
 * The BullMQ priority of a run in `slot` with `priority`: the slot first
 * (clamped to {@link MAX_SLOT}), the run's priority within it; from 1 to
 * {@link MAX_QUEUE_PRIORITY}.
 */
export function queuePriorityOf(slot: number, priority: number): number {
  // Slots are sums of 1 / weight: 3 * (1/3) must land in slot 1, not 0.999… in slot 0.
  const whole = Math.min(MAX_SLOT, Math.max(0, Math.floor(slot + SLOT_EPSILON)));
  return 1 + whole * PRIORITY_LEVELS + (priority - 1);
}

/** The slot a BullMQ priority given by {@link queuePriorityOf} stands for (its whole part). */
export function slotOfQueuePriority(queuePriority: number): number {
  return Math.floor((queuePriority - 1) / PRIORITY_LEVELS);
}

/** Reads a stored clock; `undefined` for none or one that does not parse (the tenant starts again at the fleet's time). */
export function parseTenantClock(text: string | undefined): TenantClock | undefined {
  if (text === undefined) return undefined;
  try {
    const value = JSON.parse(text) as Partial<TenantClock>;
    const valid =
      typeof value.next === 'number' &&
      Array.isArray(value.tails) &&
      value.tails.length === PRIORITY_LEVELS &&
      value.tails.every((t) => t === null || typeof t === 'number');
    return valid ? (value as TenantClock) : undefined;
  } catch {
    return undefined;
  }
}
