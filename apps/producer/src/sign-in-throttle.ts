/** Failed sign-ins one client address may make per window. */
export const SIGN_IN_ATTEMPTS_PER_WINDOW = 10;

/** The sliding window sign-in attempts are counted over, in milliseconds. */
export const SIGN_IN_WINDOW_MS = 60_000;

/** Most client addresses tracked at once; past it the longest-idle one is forgotten. */
export const SIGN_IN_TRACKED_ADDRESSES = 10_000;

/** Options of {@link SignInThrottle}. */
export interface SignInThrottleOptions {
  /** @defaultValue {@link SIGN_IN_ATTEMPTS_PER_WINDOW} */
  attempts?: number;
  /** @defaultValue {@link SIGN_IN_WINDOW_MS} */
  windowMs?: number;
  /** @defaultValue {@link SIGN_IN_TRACKED_ADDRESSES} */
  maxAddresses?: number;
  now?: () => number;
}

/** What {@link SignInThrottle.attempt} decided. */
export type SignInAttempt =
  | {
      allowed: true;
      /** Call when the key was right: a successful sign-in does not count. */ succeeded(): void;
    }
  | { allowed: false; /** Seconds until the address may try again. */ retryAfterS: number };

/**
 * Failed sign-ins per client address over a sliding window, in this
 * process's memory (each producer counts its own). An attempt is counted as
 * it starts, so attempts sent at once cannot slip past the limit, and
 * forgotten when it succeeds.
 */
export class SignInThrottle {
  private readonly attempts: number;
  private readonly windowMs: number;
  private readonly maxAddresses: number;
  private readonly now: () => number;
  /** Start times of each address's counted attempts, oldest first; the map in least-recently-tried order. */
  private readonly byAddress = new Map<string, number[]>();

  constructor(options: SignInThrottleOptions = {}) {
    this.attempts = options.attempts ?? SIGN_IN_ATTEMPTS_PER_WINDOW;
    this.windowMs = options.windowMs ?? SIGN_IN_WINDOW_MS;
    this.maxAddresses = options.maxAddresses ?? SIGN_IN_TRACKED_ADDRESSES;
    this.now = options.now ?? Date.now;
  }

  /** Counts a sign-in attempt from `address`, or refuses it when the address has used up its window. */
  attempt(address: string): SignInAttempt {
    const now = this.now();
    const times = (this.byAddress.get(address) ?? []).filter((t) => t > now - this.windowMs);
    this.byAddress.delete(address);
    if (times.length >= this.attempts) {
      this.byAddress.set(address, times);
      return {
        allowed: false,
        retryAfterS: Math.max(1, Math.ceil((times[0]! + this.windowMs - now) / 1000)),
      };
    }
    times.push(now);
    this.byAddress.set(address, times);
    if (this.byAddress.size > this.maxAddresses)
      this.byAddress.delete(this.byAddress.keys().next().value!);
    return {
      allowed: true,
      succeeded: () => {
        const kept = this.byAddress.get(address);
        const at = kept?.indexOf(now) ?? -1;
        if (at >= 0) kept!.splice(at, 1);
        if (kept?.length === 0) this.byAddress.delete(address);
      },
    };
  }
}
