import { afterEach, describe, expect, it, vi } from 'vitest';
import { startPeriodicPass } from './periodic-pass.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('startPeriodicPass', () => {
  it('runs one pass at a time: a tick during a slow pass is skipped, the next after it runs', async () => {
    vi.useFakeTimers();
    let started = 0;
    let finish: (() => void) | undefined;
    const periodic = startPeriodicPass(
      () => {
        started++;
        return new Promise<void>((resolve) => (finish = resolve));
      },
      { everyMs: 100, onError: () => undefined },
    );
    await vi.advanceTimersByTimeAsync(100);
    expect(started).toBe(1);
    await vi.advanceTimersByTimeAsync(300);
    expect(started, 'ticks while the first pass runs start nothing').toBe(1);
    finish!();
    await vi.advanceTimersByTimeAsync(100);
    expect(started).toBe(2);
    finish!();
    await periodic.stop();
  });

  it("hands a pass's error to onError and keeps ticking; stop waits for the pass in progress", async () => {
    vi.useFakeTimers();
    const errors: unknown[] = [];
    let passes = 0;
    let finish: (() => void) | undefined;
    const periodic = startPeriodicPass(
      async () => {
        passes++;
        if (passes === 1) throw new Error('store down');
        await new Promise<void>((resolve) => (finish = resolve));
      },
      { everyMs: 50, onError: (error) => errors.push(error) },
    );
    await vi.advanceTimersByTimeAsync(100);
    expect(errors).toEqual([new Error('store down')]);
    expect(passes).toBe(2);
    let stopped = false;
    const stopping = periodic.stop().then(() => (stopped = true));
    await vi.advanceTimersByTimeAsync(200);
    expect(stopped, 'stop waits for the pass in progress').toBe(false);
    expect(passes, 'no pass starts once stopped').toBe(2);
    finish!();
    await stopping;
    expect(stopped).toBe(true);
  });
});
