import type { LiveEvent } from './live-event.js';

/**
 * Gathers the live events published within one tick and hands them to `send`
 * together, in publish order; the next tick's batch waits until `send` has
 * finished, so a run's events never overtake each other.
 */
export class TickBatch {
  private pending: LiveEvent[] = [];
  private flushing: Promise<void> | undefined;

  constructor(private readonly send: (events: readonly LiveEvent[]) => Promise<void>) {}

  /** Queues an event for the current tick's batch. */
  push(event: LiveEvent): void {
    this.pending.push(event);
    this.flushing ??= this.drain();
  }

  /** Resolves once everything pushed so far has been sent. */
  async flushed(): Promise<void> {
    await this.flushing;
  }

  private async drain(): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    while (this.pending.length > 0) {
      const events = this.pending;
      this.pending = [];
      await this.send(events);
    }
    this.flushing = undefined;
  }
}
