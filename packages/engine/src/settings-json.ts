import type { z } from 'zod';
import { UserError } from './errors.js';

/**
 * A setting given as JSON text (an environment variable) or as the value
 * itself (a registry module's export): the text parsed, a {@link UserError}
 * naming `source` when it is not JSON.
 */
export function settingValue(value: unknown, source: string): unknown {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value);
  } catch (error) {
    throw new UserError(`${source}: not JSON (${(error as Error).message})`);
  }
}

/** The field a zod issue is about: its path, or the keys it did not expect. */
export function issueField(issue: z.core.$ZodIssue): string {
  return issue.code === 'unrecognized_keys'
    ? issue.keys.join(', ')
    : issue.path.join('.') || 'entry';
}
