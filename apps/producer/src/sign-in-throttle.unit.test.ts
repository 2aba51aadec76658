import { describe, expect, it } from 'vitest';
import { SignInThrottle } from './sign-in-throttle.js';

describe('SignInThrottle', () => {
  it('refuses an address after its failures fill the window, saying when to retry, and lets it in as the window slides', () => {
    let now = 1_000_000;
    const throttle = new SignInThrottle({ attempts: 3, windowMs: 60_000, now: () => now });
    for (let i = 0; i < 3; i++) {
      expect(throttle.attempt('10.0.0.1').allowed).toBe(true);
      now += 10_000;
    }
    expect(throttle.attempt('10.0.0.1')).toEqual({ allowed: false, retryAfterS: 30 });
    expect(throttle.attempt('10.0.0.2').allowed).toBe(true);
    now += 30_000; // the first failure leaves the window
    expect(throttle.attempt('10.0.0.1').allowed).toBe(true);
    expect(throttle.attempt('10.0.0.1')).toEqual({ allowed: false, retryAfterS: 10 });
  });

  it('does not count successful sign-ins, and forgets the longest-idle address past its bound', () => {
    const throttle = new SignInThrottle({ attempts: 2, maxAddresses: 2 });
    for (let i = 0; i < 5; i++) {
      const attempt = throttle.attempt('a');
      expect(attempt.allowed).toBe(true);
      if (attempt.allowed) attempt.succeeded();
    }
    throttle.attempt('b');
    throttle.attempt('b');
    expect(throttle.attempt('b').allowed).toBe(false);
    throttle.attempt('c');
    throttle.attempt('a'); // 'b' is now the longest idle of three
    expect(throttle.attempt('b').allowed).toBe(true);
  });
});
