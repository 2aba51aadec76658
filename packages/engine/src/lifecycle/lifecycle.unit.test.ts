import { describe, expect, it } from 'vitest';
import {
  CheckpointWriteError,
  EntityNotFoundError,
  LeaseLostError,
  ModelError,
  StoredStateError,
} from '../errors.js';
import { decideContinue } from './continue-rules.js';
import { deserializeError, dispositionOfError, serializeError } from './error-disposition.js';
import {
  canTransition,
  CANCELLABLE_STATUSES,
  CLAIMABLE_STATUSES,
  RUN_STATUSES,
} from './run-status.js';
import type { RunRecord } from '../run-types.js';

describe('the run lifecycle', () => {
  it('claims PENDING, RUNNING and ERROR runs on a plain pickup, never a PAUSED one, and cancels a PAUSED one', () => {
    expect(CLAIMABLE_STATUSES).toEqual(['PENDING', 'RUNNING', 'ERROR']);
    expect(canTransition('PAUSED', 'claim')).toBe(false);
    expect(canTransition('PAUSED', 'resumeFromPause')).toBe(true);
    expect(CANCELLABLE_STATUSES).toContain('PAUSED');
    expect(RUN_STATUSES.filter((s) => canTransition(s, 'cancel'))).toEqual([
      'PENDING',
      'RUNNING',
      'PAUSED',
    ]);
  });

  it('refuses to continue a PAUSED run and says it resumes by itself', () => {
    const paused = { runId: 'r', status: 'PAUSED' } as RunRecord;
    expect(() => decideContinue('r', paused, {}, new Date())).toThrow(
      /resumes by itself once its pending actions are decided/,
    );
  });

  it('treats a continue of a PENDING run as already queued, and refuses one with an input it would drop', () => {
    const pending = { runId: 'r', status: 'PENDING' } as RunRecord;
    expect(decideContinue('r', pending, {}, new Date()).action).toBe('already-queued');
    expect(() => decideContinue('r', pending, { input: 'also do this' }, new Date())).toThrow(
      /has not started yet/,
    );
  });

  it('classifies an error the same on both sides of a thread boundary', () => {
    const cases: [Error, string][] = [
      [new LeaseLostError('r', 2), 'stop-silently'],
      [new CheckpointWriteError('r', { cause: new Error('ECONNRESET') }), 'retry-job'],
      [new EntityNotFoundError('agent', 'gone'), 'end-run-in-error'],
      [new StoredStateError('r', 'schema version 9'), 'end-run-in-error'],
      [new ModelError('bad request', false, 400), 'end-run-in-error'],
    ];
    for (const [error, disposition] of cases) {
      expect(dispositionOfError(error)).toBe(disposition);
      const crossed = deserializeError(structuredClone(serializeError(error)));
      expect(dispositionOfError(crossed), error.name).toBe(disposition);
      expect(serializeError(crossed)).toEqual(serializeError(error));
      expect(crossed.message).toBe(error.message);
    }
  });
});
