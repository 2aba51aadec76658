import { describe, expect, it } from 'vitest';
import { TestClock } from './test-clock.js';

describe('TestClock', () => {
  it('fires the timers an advance passes, in time order, each at its own time; a cancelled one never', () => {
    const clock = new TestClock(new Date('2026-01-01T00:00:00.000Z'));
    const fired: string[] = [];
    const at = (name: string) => () => fired.push(`${name}@${clock.now().toISOString()}`);
    clock.setTimer(20, at('b'));
    clock.setTimer(10, at('a'));
    const cancel = clock.setTimer(15, at('cancelled'));
    clock.setTimer(10, () => clock.setTimer(5, at('set by a fired one')));
    clock.setTimer(100, at('later'));
    cancel();

    clock.advance(50);
    expect(fired).toEqual([
      'a@2026-01-01T00:00:00.010Z',
      'set by a fired one@2026-01-01T00:00:00.015Z',
      'b@2026-01-01T00:00:00.020Z',
    ]);
    expect(clock.now()).toEqual(new Date('2026-01-01T00:00:00.050Z'));
    clock.advance(50);
    expect(fired.at(-1)).toBe('later@2026-01-01T00:00:00.100Z');
  });

  it('refuses to move back, naming what it got', () => {
    expect(() => new TestClock().advance(-1)).toThrow('advance takes ms >= 0, got -1');
  });
});
