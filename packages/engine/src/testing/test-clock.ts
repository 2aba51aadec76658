import type { Clock } from '../engine-resources.js';

interface PendingTimer {
  at: number;
  seq: number;
  fn: () => void;
}

/**
 * A clock that moves only when a test moves it (Temporal's time-skipping
 * test environment is the model): `now()` stays put, and the timers set on
 * it fire, in time order, as {@link TestClock.advance} passes them. Give it
 * to an engine (`EngineOptions.clock`) or to a rule that takes a `Clock`, and
 * a test of a deadline or an expiry moves the clock instead of waiting.
 *
 * @example
 * const clock = new TestClock();
 * clock.setTimer(30_000, () => console.log('due'));
 * clock.advance(30_000); // prints "due" at once; clock.now() is 30 s later
 */
export class TestClock implements Clock {
  #now: number;
  #seq = 0;
  readonly #timers = new Set<PendingTimer>();

  /**
   * @param start the time the clock shows until it is moved: the wall time by
   * default, so times the store writes (a deadline Postgres counts from a
   * run's creation) compare with it as they would in production.
   */
  constructor(start: Date = new Date()) {
    this.#now = start.getTime();
  }

  now(): Date {
    return new Date(this.#now);
  }

  /** The time `ms` from this clock's now (negative: in its past). */
  in(ms: number): Date {
    return new Date(this.#now + ms);
  }

  setTimer(ms: number, fn: () => void): () => void {
    const timer: PendingTimer = { at: this.#now + Math.max(0, ms), seq: this.#seq++, fn };
    this.#timers.add(timer);
    return () => this.#timers.delete(timer);
  }

  /**
   * Moves the clock `ms` on, firing each timer due on the way at its own
   * time (earliest first; a timer a fired one sets is fired too if it is due).
   */
  advance(ms: number): void {
    if (!(ms >= 0)) throw new RangeError(`advance takes ms >= 0, got ${ms}`);
    const target = this.#now + ms;
    for (let next = this.#due(target); next; next = this.#due(target)) {
      this.#timers.delete(next);
      this.#now = next.at;
      next.fn();
    }
    this.#now = target;
  }

  #due(target: number): PendingTimer | undefined {
    let first: PendingTimer | undefined;
    for (const t of this.#timers)
      if (t.at <= target && (!first || t.at < first.at || (t.at === first.at && t.seq < first.seq)))
        first = t;
    return first;
  }
}
