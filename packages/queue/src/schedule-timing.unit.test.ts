import { describe, expect, it } from 'vitest';
import { MIN_SCHEDULE_EVERY_MS, nextFireTimes, timingProblem } from './schedule-timing.js';

describe('schedule timing', () => {
  it('names the field at fault', () => {
    expect(timingProblem({ cron: '0 9 * * 1-5', timezone: 'Europe/Paris' })).toBeUndefined();
    expect(timingProblem({ cron: '*/10 * * * * *', timezone: 'UTC' })).toBeUndefined();
    expect(timingProblem({ everyMs: MIN_SCHEDULE_EVERY_MS })).toBeUndefined();
    expect(timingProblem({ cron: '61 * * * *', timezone: 'UTC' })?.field).toBe('cron');
    expect(timingProblem({ cron: '* * * * *', timezone: 'Mars/Olympus' })?.field).toBe('timezone');
    expect(timingProblem({ cron: '* * * * *', timezone: '' })?.field).toBe('timezone');
    expect(timingProblem({ everyMs: MIN_SCHEDULE_EVERY_MS - 1 })?.field).toBe('every_ms');
    expect(timingProblem({ everyMs: 1500.5 })?.field).toBe('every_ms');
  });

  it('lists the next firing times of a cron pattern in its time zone, and of an interval', () => {
    const after = Date.parse('2026-03-27T12:00:00Z');
    // 09:00 in Paris: 08:00 UTC before the change to summer time (29 March), 07:00 after it.
    expect(
      nextFireTimes({ cron: '0 9 * * *', timezone: 'Europe/Paris' }, { after, count: 3 }).map(
        (ms) => new Date(ms).toISOString(),
      ),
    ).toEqual(['2026-03-28T08:00:00.000Z', '2026-03-29T07:00:00.000Z', '2026-03-30T07:00:00.000Z']);
    expect(nextFireTimes({ everyMs: 1000 }, { after, count: 2, first: after + 500 })).toEqual([
      after + 500,
      after + 1500,
    ]);
  });
});
