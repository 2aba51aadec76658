import {
  EntityNotFoundError,
  RunNotContinuableError,
  ContinuePendingError,
  RunNotFoundError,
  UserError,
} from '@cairn/engine';
import { RunAlreadyTerminalError } from '@cairn/store';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { InvalidJsonError, PayloadTooLargeError, UnauthorizedError } from './errors.js';
import { toErrorResponse } from './http-errors.js';

describe('toErrorResponse', () => {
  it.each([
    [new InvalidJsonError('bad'), 400, 'invalid_json'],
    [new UnauthorizedError('no key'), 401, 'unauthorized'],
    [new RunNotFoundError('r1'), 404, 'run_not_found'],
    [new EntityNotFoundError('team', 'x'), 404, 'entity_not_found'],
    [new RunNotContinuableError('r1', 'CANCELLED', 'no'), 409, 'run_not_continuable'],
    [new RunAlreadyTerminalError('r1', 'COMPLETED'), 409, 'run_already_terminal'],
    [new ContinuePendingError('r1'), 409, 'continue_pending'],
    [new PayloadTooLargeError(10), 413, 'payload_too_large'],
    [new UserError('bad input'), 400, 'invalid_request'],
  ])('maps %s to its status', (error, status, code) => {
    const response = toErrorResponse(error);
    expect(response.status).toBe(status);
    expect(response.body).toEqual({ error: code, message: error.message });
  });

  it('names every field of a validation error, unknown keys included', () => {
    const schema = z.strictObject({ input: z.string() });
    const { error } = schema.safeParse({ input: 1, extra: true, other: 2 });
    const response = toErrorResponse(error);
    expect(response.status).toBe(400);
    expect(response.body.issues?.map((i) => i.path).sort()).toEqual(['extra', 'input', 'other']);
  });

  it('answers anything else with a 500 that reveals nothing', () => {
    const response = toErrorResponse(new Error('password=hunter2 at db.internal:5432'));
    expect(response).toEqual({
      status: 500,
      body: { error: 'internal_error', message: 'internal server error' },
    });
    expect(toErrorResponse('a string').status).toBe(500);
  });
});
