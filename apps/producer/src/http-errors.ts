import {
  CapExceededError,
  DecisionForbiddenError,
  ActionExpiredError,
  ActionNotFoundError,
  ArgsDigestMismatchError,
  DecisionConflictError,
  InvalidDecisionError,
  InvalidForkPointError,
  IdempotencyKeyReusedError,
  SessionNotFoundError,
  EntityNotFoundError,
  RunNotContinuableError,
  ContinuePendingError,
  RunNotFoundError,
  TenantBudgetExhaustedError,
  UserError,
} from '@cairn/engine';
import {
  isPostgresUnavailable,
  RunAlreadyTerminalError,
  SessionHasForksError,
  SessionHasLiveRunsError,
} from '@cairn/store';
import { ZodError, type z } from 'zod';
import {
  FieldTooLongError,
  ForbiddenError,
  InvalidBodyError,
  InvalidJsonError,
  InvalidParameterError,
  NotFoundError,
  PayloadTooLargeError,
  TooManyRunsError,
  TooManyStreamsError,
  UnauthorizedError,
  UnsupportedMediaTypeError,
} from './errors.js';
import type { errorBodySchema } from './openapi/answer-schemas.js';

/** The JSON body of every error response: its one owner is {@link errorBodySchema}, which the OpenAPI document shows. */
export type ErrorBody = z.infer<typeof errorBodySchema>;

/** An error as the API answers it: status, JSON body, extra headers. */
export interface ErrorResponse {
  status: 400 | 401 | 403 | 404 | 409 | 410 | 412 | 413 | 415 | 422 | 429 | 500 | 503;
  body: ErrorBody;
  headers?: Record<string, string>;
}

/** Maps any thrown value to its HTTP answer; unknown errors become a 500 that reveals nothing. */
export function toErrorResponse(error: unknown): ErrorResponse {
  if (error instanceof ZodError) {
    const issues = error.issues.flatMap((issue) =>
      issue.code === 'unrecognized_keys'
        ? issue.keys.map((key) => ({
            path: formatPath([...issue.path, key]),
            message: 'unknown field',
          }))
        : [{ path: formatPath(issue.path), message: issue.message }],
    );
    const message = issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join('; ');
    return { status: 400, body: { error: 'invalid_body', message, issues } };
  }
  if (error instanceof InvalidJsonError) return reply(400, 'invalid_json', error);
  if (error instanceof InvalidBodyError) {
    return {
      status: 400,
      body: {
        error: 'invalid_body',
        message: error.message,
        issues: [{ path: error.path, message: error.problem }],
      },
    };
  }
  if (error instanceof InvalidParameterError) return reply(400, 'invalid_parameter', error);
  if (error instanceof UnauthorizedError) {
    return { ...reply(401, 'unauthorized', error), headers: { 'WWW-Authenticate': 'Bearer' } };
  }
  if (error instanceof ForbiddenError) return reply(403, 'forbidden', error);
  if (error instanceof PayloadTooLargeError) {
    // The rest of the body is never read, so the connection cannot carry another request: say so, and Node closes it.
    return { ...reply(413, 'payload_too_large', error), headers: { Connection: 'close' } };
  }
  if (error instanceof UnsupportedMediaTypeError)
    return reply(415, 'unsupported_media_type', error);
  if (error instanceof FieldTooLongError) return reply(422, 'field_too_long', error);
  if (error instanceof TooManyRunsError) return reply(429, 'too_many_runs', error);
  if (error instanceof TenantBudgetExhaustedError) {
    return {
      status: 429,
      body: {
        ...reply(429, 'budget_exhausted', error).body,
        budget: {
          scope: 'tenant',
          tenant: error.tenantId,
          day: error.day,
          spent_usd: error.spentUsd,
          max_cost_usd: error.budgetUsd,
        },
      },
      // The next UTC day, when the tenant's budget is whole again.
      headers: { 'Retry-After': String(error.retryAfterS) },
    };
  }
  if (error instanceof TooManyStreamsError) {
    return {
      ...reply(429, 'too_many_streams', error),
      headers: { 'Retry-After': String(error.retryAfterS) },
    };
  }
  if (error instanceof RunNotFoundError) return reply(404, 'run_not_found', error);
  if (error instanceof SessionNotFoundError) return reply(404, 'session_not_found', error);
  if (error instanceof IdempotencyKeyReusedError)
    return reply(422, 'idempotency_key_reused', error);
  if (error instanceof EntityNotFoundError) return reply(404, 'entity_not_found', error);
  if (error instanceof NotFoundError) return reply(404, 'not_found', error);
  if (error instanceof ActionNotFoundError) return reply(404, 'action_not_found', error);
  if (error instanceof DecisionConflictError) return reply(409, 'decision_conflict', error);
  if (error instanceof ActionExpiredError) return reply(410, 'action_expired', error);
  if (error instanceof ArgsDigestMismatchError) return reply(412, 'args_digest_mismatch', error);
  if (error instanceof InvalidDecisionError) return reply(422, 'invalid_decision', error);
  if (error instanceof DecisionForbiddenError) return reply(403, 'forbidden', error);
  if (error instanceof CapExceededError) return reply(400, 'cap_exceeded', error);
  if (error instanceof InvalidForkPointError) return reply(422, 'invalid_fork_point', error);
  if (error instanceof RunNotContinuableError) return reply(409, 'run_not_continuable', error);
  if (error instanceof ContinuePendingError) return reply(409, 'continue_pending', error);
  if (error instanceof RunAlreadyTerminalError) return reply(409, 'run_already_terminal', error);
  if (error instanceof SessionHasLiveRunsError) return reply(409, 'session_has_live_runs', error);
  if (error instanceof SessionHasForksError) return reply(409, 'session_has_forks', error);
  if (error instanceof UserError) return reply(400, 'invalid_request', error);
  // Postgres is down or restarting: nothing was done, the same request may be sent again shortly.
  if (isPostgresUnavailable(error)) {
    return {
      status: 503,
      body: {
        error: 'service_unavailable',
        message: 'Postgres is unavailable; nothing was done, retry shortly',
      },
      headers: { 'Retry-After': '1' },
    };
  }
  return { status: 500, body: { error: 'internal_error', message: 'internal server error' } };
}

function reply(status: ErrorResponse['status'], code: string, error: Error): ErrorResponse {
  return { status, body: { error: code, message: error.message } };
}

function formatPath(path: readonly PropertyKey[]): string {
  return path.map(String).join('.');
}
