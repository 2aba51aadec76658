import { UserError } from './errors.js';

/** The longest deadline a run may be given: 365 days, in ms (`deadline_ms`, `maxDurationMs`). */
export const MAX_DEADLINE_MS = 365 * 24 * 60 * 60 * 1000;

/** True when `value` is a deadline in ms a run may be given: an integer from 1 to {@link MAX_DEADLINE_MS}. */
export function isDeadlineMs(value: unknown): value is number {
  return Number.isInteger(value) && (value as number) >= 1 && (value as number) <= MAX_DEADLINE_MS;
}

/** Throws a `UserError` naming `field` unless `value` is absent or {@link isDeadlineMs}. */
export function assertDeadlineMs(field: string, value: unknown): void {
  if (value === undefined || isDeadlineMs(value)) return;
  throw new UserError(
    `${field} must be a positive integer number of milliseconds, at most ${MAX_DEADLINE_MS} (365 days); got ${JSON.stringify(value) ?? String(value)}`,
  );
}
