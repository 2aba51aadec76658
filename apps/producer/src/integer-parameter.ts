import { MAX_INTEGER_COLUMN } from '@cairn/store';
import { InvalidParameterError } from './errors.js';

/** The values an {@link integerParameter} accepts, both ends included. */
export interface IntegerRange {
  min: 0 | 1;
  max: number;
}

/** A message index or an event seq: from 0 to what their `integer` columns hold (a larger one would reach Postgres and fail there). */
export const STORED_INDEX: IntegerRange = { min: 0, max: MAX_INTEGER_COLUMN };

/** A 1-based page number, bounded like a stored index (no page of a run or of the run list is further). */
export const PAGE_NUMBER: IntegerRange = { min: 1, max: MAX_INTEGER_COLUMN };

/** `raw` as an integer in `range`: decimal digits only (no sign, no exponent, no space); undefined otherwise. */
export function parseInteger(raw: string, range: IntegerRange): number | undefined {
  if (!/^\d+$/.test(raw)) return undefined;
  const value = Number(raw);
  return value >= range.min && value <= range.max ? value : undefined;
}

/** How an error names `range`: `a non-negative integer, at most 2147483647`. */
export function describeRange(range: IntegerRange): string {
  return `a ${range.min === 0 ? 'non-negative' : 'positive'} integer, at most ${range.max}`;
}

/** An integer path, query or header parameter in `range`; anything else (absent included) is a 400 naming `name` and the range. */
export function integerParameter(
  name: string,
  raw: string | undefined,
  range: IntegerRange,
): number {
  const value = raw === undefined ? undefined : parseInteger(raw, range);
  if (value === undefined) throw new InvalidParameterError(name, `must be ${describeRange(range)}`);
  return value;
}
