/** What {@link ClockBook.read} returns. */
export interface ClockReading {
  clock: string | undefined;
  lastSlot: number | undefined;
  firstWaitingPriority: number | undefined;
}

/**
 * Where the tenants' virtual clocks of one queue live (`fair-share.ts`):
 * beside the queue, on its Redis or in its Postgres schema, shared by every
 * producer and worker of the queue. Clocks are soft state: lost, the tenants
 * start again at the fleet's time (the slot of the first run waiting).
 */
export interface ClockBook {
  /**
   * In one round trip: the tenant's stored clock (`undefined`: none), the
   * largest slot given so far (`undefined`: none since the clocks started)
   * and the BullMQ priority of the queue's first job waiting with one
   * (`undefined`: none waits).
   */
  read(tenant: string): Promise<ClockReading>;
  /**
   * Stores `next` as the tenant's clock if it is still `expected`, and raises
   * the largest slot given to `slot`; false when another enqueue moved the
   * clock first (read again and retry).
   */
  swap(tenant: string, expected: string | undefined, next: string, slot: number): Promise<boolean>;
  /** Starts every clock again (a rebase) if the largest slot given is still `lastSlot`. */
  clear(lastSlot: number): Promise<void>;
  /** Releases what the book opened. */
  close(): Promise<void>;
}
