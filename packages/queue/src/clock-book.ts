/**
 * Where the tenants' virtual clocks of one queue live (`fair-share.ts`):
 * beside the queue, on its Redis or in its Postgres schema, shared by every
 * producer and worker of the queue. Clocks are soft state: lost, the tenants
 * start again at the fleet's time (the slot of the first run waiting).
 */
export interface ClockBook {
  /** The tenant's stored clock (`undefined`: none) and the largest slot given so far (`undefined`: none since the clocks started). */
  read(tenant: string): Promise<{ clock: string | undefined; lastSlot: number | undefined }>;
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
