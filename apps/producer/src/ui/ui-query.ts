import { RUN_STATUSES, type RunStatus } from '@cairn/engine';
import { InvalidParameterError } from '../errors.js';
import { integerParameter, PAGE_NUMBER } from '../integer-parameter.js';

/** A 1-based page number from the query string; absent or empty is undefined, anything else but a {@link PAGE_NUMBER} is a 400 naming `name`. */
export function pageParameter(name: string, raw: string | undefined): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  return integerParameter(name, raw, PAGE_NUMBER);
}

/** A run status from the query string; absent or empty is undefined, an unknown one is a 400 listing the statuses. */
export function statusParameter(raw: string | undefined): RunStatus | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (!(RUN_STATUSES as readonly string[]).includes(raw)) {
    throw new InvalidParameterError('status', `must be one of ${RUN_STATUSES.join(', ')}`);
  }
  return raw as RunStatus;
}
