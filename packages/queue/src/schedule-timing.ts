import { CronExpressionParser } from 'cron-parser';

/** The shortest interval a schedule may fire at, in ms (documented in docs/operations.md "Schedules"). */
export const MIN_SCHEDULE_EVERY_MS = 1000;

/** The longest interval a schedule may fire at, in ms: 365 days. */
export const MAX_SCHEDULE_EVERY_MS = 365 * 24 * 3_600_000;

/** When a schedule fires, as BullMQ's job schedulers take it: a cron pattern in an IANA time zone, or an interval. */
export type FiringTiming = { cron: string; timezone: string } | { everyMs: number };

/** A timing's problem, naming the API field it lies in. */
export interface TimingProblem {
  field: 'cron' | 'timezone' | 'every_ms';
  problem: string;
}

/**
 * What is wrong with a timing, if anything: a cron pattern cron-parser (BullMQ's own parser)
 * refuses, a time zone this runtime does not know, an interval out of range.
 */
export function timingProblem(timing: FiringTiming): TimingProblem | undefined {
  if ('everyMs' in timing) {
    const { everyMs } = timing;
    if (
      !Number.isInteger(everyMs) ||
      everyMs < MIN_SCHEDULE_EVERY_MS ||
      everyMs > MAX_SCHEDULE_EVERY_MS
    )
      return {
        field: 'every_ms',
        problem: `must be an integer number of ms from ${MIN_SCHEDULE_EVERY_MS} to ${MAX_SCHEDULE_EVERY_MS} (365 days), got ${String(everyMs)}`,
      };
    return undefined;
  }
  if (!isTimeZone(timing.timezone))
    return {
      field: 'timezone',
      problem: `must be an IANA time zone such as "UTC" or "Europe/Paris", got ${JSON.stringify(timing.timezone)}`,
    };
  try {
    CronExpressionParser.parse(timing.cron, { tz: timing.timezone }).next();
  } catch (error) {
    return {
      field: 'cron',
      problem: `is not a valid cron pattern (${(error as Error).message}): ${JSON.stringify(timing.cron)}`,
    };
  }
  return undefined;
}

/** The next `count` firing times after `after` (ms since the epoch), in ms; an interval's are counted from `first`. */
export function nextFireTimes(
  timing: FiringTiming,
  options: { after: number; count: number; first?: number },
): number[] {
  if ('everyMs' in timing) {
    const start = options.first ?? options.after + timing.everyMs;
    return Array.from({ length: options.count }, (_, i) => start + i * timing.everyMs);
  }
  const expression = CronExpressionParser.parse(timing.cron, {
    tz: timing.timezone,
    currentDate: new Date(options.after),
  });
  return Array.from({ length: options.count }, () => expression.next().getTime());
}

function isTimeZone(timezone: string): boolean {
  if (timezone.trim() === '') return false;
  try {
    new Intl.DateTimeFormat('en', { timeZone: timezone });
    return true;
  } catch {
    return false;
  }
}
