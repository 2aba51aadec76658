import type { SessionKey } from '@cairn/store';
import { FieldTooLongError, TooManyRunsError } from './errors.js';
import type { ProducerClient } from './producer-client.js';
import { MAX_INPUT_LENGTH } from './request-schemas.js';

/** Default cap on a run's `metadata`, in characters of its JSON. */
export const DEFAULT_MAX_METADATA_CHARS = 16 * 1024;
/** Default cap on the top-level runs one session may hold. */
export const DEFAULT_MAX_RUNS_PER_SESSION = 1000;

/** What the run routes enforce on top of the body schemas. */
export interface RunLimits {
  /** Longest `input` (create, continue), in characters: 422 beyond. */
  maxInputChars: number;
  /** Longest `metadata`, in characters of its JSON: 422 beyond. */
  maxMetadataChars: number;
  /** Most top-level runs in one session: a create or fork beyond is a 429. */
  maxRunsPerSession: number;
}

/** The limits, defaults filled in. */
export function runLimits(limits: Partial<RunLimits> = {}): RunLimits {
  return {
    maxInputChars: limits.maxInputChars ?? MAX_INPUT_LENGTH,
    maxMetadataChars: limits.maxMetadataChars ?? DEFAULT_MAX_METADATA_CHARS,
    maxRunsPerSession: limits.maxRunsPerSession ?? DEFAULT_MAX_RUNS_PER_SESSION,
  };
}

/** Throws {@link FieldTooLongError} for an `input` or `metadata` over its limit. */
export function assertFieldsFit(
  body: { input?: string; metadata?: Record<string, unknown> },
  limits: RunLimits,
): void {
  if (body.input !== undefined && body.input.length > limits.maxInputChars) {
    throw new FieldTooLongError('input', body.input.length, limits.maxInputChars);
  }
  if (body.metadata !== undefined) {
    const length = JSON.stringify(body.metadata).length;
    if (length > limits.maxMetadataChars)
      throw new FieldTooLongError('metadata', length, limits.maxMetadataChars);
  }
}

/**
 * Throws {@link TooManyRunsError} when the session (its tenant's: another tenant's of the same id is
 * another session) already holds `maxRunsPerSession` top-level runs. A check before the insert:
 * concurrent creates in one session may overshoot by as many as run at once.
 */
export async function assertSessionHasRoom(
  client: ProducerClient,
  session: SessionKey | undefined,
  limits: RunLimits,
): Promise<void> {
  if (session === undefined) return;
  const view = await client.getSession(session);
  if (view && view.runs.length >= limits.maxRunsPerSession)
    throw new TooManyRunsError(session.sessionId, limits.maxRunsPerSession);
}
