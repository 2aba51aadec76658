import { describe, expect, it } from 'vitest';
import {
  assignSlot,
  MAX_QUEUE_PRIORITY,
  MAX_SLOT,
  OVERTAKE_SLOTS,
  parseTenantClock,
  queuePriorityOf,
  slotOfQueuePriority,
  type TenantClock,
} from './fair-share.js';

/**
 * A paused queue as BullMQ keeps it: runs added in order, each with the
 * priority its tenant's clock gives it (fleet time 0: nothing claimed yet),
 * then claimed by priority, ties in the order added.
 */
function claimOrder(
  adds: readonly { name: string; tenant: string; priority?: number }[],
  weights: Readonly<Record<string, number>> = {},
): string[] {
  const clocks = new Map<string, TenantClock>();
  const queued = adds.map((add, index) => {
    const priority = add.priority ?? 5;
    const { slot, clock } = assignSlot(clocks.get(add.tenant), {
      fleetTime: 0,
      weight: weights[add.tenant] ?? 1,
      priority,
    });
    clocks.set(add.tenant, clock);
    return { name: add.name, index, queuePriority: queuePriorityOf(slot, priority) };
  });
  return queued
    .sort((a, b) => a.queuePriority - b.queuePriority || a.index - b.index)
    .map((q) => q.name);
}

const runs = (tenant: string, count: number, priority?: number, prefix = tenant) =>
  Array.from({ length: count }, (_, i) => ({ name: `${prefix}${i}`, tenant, priority }));

describe('fair share across tenants', () => {
  it("interleaves a later tenant's default runs with a priority-1 flood queued before them", () => {
    const order = claimOrder([...runs('a', 6, 1), ...runs('b', 3)]);
    expect(order).toEqual(['a0', 'b0', 'a1', 'b1', 'a2', 'b2', 'a3', 'a4', 'a5']);
  });

  it('gives tenants weighted 3:1 a 3:1 share', () => {
    const order = claimOrder([...runs('a', 9), ...runs('b', 9)], { a: 3 });
    const firstEight = order.slice(0, 8);
    expect(firstEight.filter((n) => n.startsWith('a'))).toHaveLength(6);
    expect(firstEight.filter((n) => n.startsWith('b'))).toHaveLength(2);
  });

  it('orders one tenant by priority, then age', () => {
    const order = claimOrder([
      { name: 'p5-old', tenant: 'a' },
      { name: 'p5-new', tenant: 'a' },
      { name: 'p9', tenant: 'a', priority: 9 },
      { name: 'p1-old', tenant: 'a', priority: 1 },
      { name: 'p3', tenant: 'a', priority: 3 },
      { name: 'p1-new', tenant: 'a', priority: 1 },
    ]);
    expect(order).toEqual(['p1-old', 'p1-new', 'p3', 'p5-old', 'p5-new', 'p9']);
  });

  it('lets a tenant run at most OVERTAKE_SLOTS ahead of its share, and pays the slots back', () => {
    // a has a default backlog (a0..), then floods priority 1 (x0..); b queues after both.
    const order = claimOrder([...runs('a', 20), ...runs('a', 20, 1, 'x'), ...runs('b', 40)]);
    const ofA = (n: string) => n.startsWith('a') || n.startsWith('x');
    let lead = 0;
    let aSoFar = 0;
    for (const [i, name] of order.slice(0, 80).entries()) {
      if (ofA(name)) aSoFar += 1;
      lead = Math.max(lead, aSoFar - (i + 1 - aSoFar));
    }
    expect(lead).toBeLessThanOrEqual(OVERTAKE_SLOTS + 1);
    // a's priority-1 runs went ahead of its own default ones, within its share.
    expect(order.indexOf('x0')).toBeLessThan(order.indexOf('a19'));
    // Over the first 80 claims, each tenant had its half.
    expect(order.slice(0, 80).filter(ofA)).toHaveLength(40);
  });

  it("starts a tenant that comes back after idling at the fleet's time, not at its old clock", () => {
    const { clock } = assignSlot(undefined, { fleetTime: 0, weight: 1, priority: 5 });
    const back = assignSlot(clock, { fleetTime: 500, weight: 1, priority: 5 });
    expect(back.slot).toBe(500);
    const behind = assignSlot(
      { next: 3, tails: Array<number | null>(10).fill(2) },
      { fleetTime: 40, weight: 1, priority: 1 },
    );
    expect(behind.slot).toBe(40);
  });

  it('refuses a weight of 0 and a priority out of range', () => {
    expect(() => assignSlot(undefined, { fleetTime: 0, weight: 0, priority: 5 })).toThrow(
      /weight must be above 0, got 0/,
    );
    expect(() => assignSlot(undefined, { fleetTime: 0, weight: 1, priority: 11 })).toThrow(
      /priority must be an integer from 1 to 10, got 11/,
    );
  });
});

describe('BullMQ priorities of slots', () => {
  it('stay within 1 .. 2^21, the slot first, then the priority, and read back', () => {
    expect(queuePriorityOf(0, 1)).toBe(1);
    expect(queuePriorityOf(0, 10)).toBe(10);
    expect(queuePriorityOf(1, 1)).toBe(11);
    expect(queuePriorityOf(2.9, 5)).toBe(queuePriorityOf(2, 5));
    expect(queuePriorityOf(MAX_SLOT, 10)).toBeLessThanOrEqual(MAX_QUEUE_PRIORITY);
    expect(slotOfQueuePriority(queuePriorityOf(1234, 7))).toBe(1234);
  });

  it('saturate past the range instead of wrapping ahead of older runs', () => {
    const top = queuePriorityOf(MAX_SLOT, 5);
    expect(queuePriorityOf(MAX_SLOT + 10_000, 5)).toBe(top);
    expect(queuePriorityOf(MAX_SLOT + 10_000, 1)).toBeLessThan(top);
    expect(queuePriorityOf(MAX_SLOT - 1, 10)).toBeLessThan(top);
  });
});

describe('parseTenantClock', () => {
  it('reads a stored clock and ignores one that does not parse', () => {
    const clock: TenantClock = { next: 4, tails: [null, null, 1, 1, 3, 3, 3, 3, 3, 3] };
    expect(parseTenantClock(JSON.stringify(clock))).toEqual(clock);
    expect(parseTenantClock(undefined)).toBeUndefined();
    expect(parseTenantClock('{"next":1}')).toBeUndefined();
    expect(parseTenantClock('nope')).toBeUndefined();
  });
});
