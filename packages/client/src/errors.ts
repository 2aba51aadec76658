/** The JSON body of the producer's error answers. */
export interface ErrorBody {
  error: string;
  message: string;
  issues?: { path: string; message: string }[];
}

/** Base of every error this client throws. */
export class CairnClientError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The producer answered with an error status; `status`, `code` and the server's `message` say which. */
export class CairnApiError extends CairnClientError {
  /** The HTTP status. */
  readonly status: number;
  /** The server's error code (`run_not_found`, `invalid_body`, ...), or `http_<status>` when the body had none. */
  readonly code: string;
  /** Fields the server named as wrong (400). */
  readonly issues: { path: string; message: string }[];
  /** How long the server asked to wait before trying again (its `Retry-After`, on 429 and 503), in ms. */
  readonly retryAfterMs: number | undefined;

  constructor(
    status: number,
    body: Partial<ErrorBody>,
    method: string,
    path: string,
    retryAfterMs?: number,
  ) {
    super(body.message ?? `${method} ${path} answered HTTP ${status}`);
    this.status = status;
    this.code = body.error ?? `http_${status}`;
    this.issues = body.issues ?? [];
    this.retryAfterMs = retryAfterMs;
  }
}

/** 400: the request named a bad field or value (see `issues`). */
export class BadRequest extends CairnApiError {}
/** 401: no API key, or an unknown one. */
export class Unauthorized extends CairnApiError {}
/** 403: the key may not do this (a read-only key writing). */
export class Forbidden extends CairnApiError {}
/** 404: no such entity, session, action or route. */
export class NotFound extends CairnApiError {}
/** 404 for a run: no run with that id (or not in the key's tenant). */
export class RunNotFound extends NotFound {}
/** 409: the run's status refuses the request (not continuable, already terminal, already decided differently). */
export class Conflict extends CairnApiError {}
/** 410: the pending action expired. */
export class Gone extends CairnApiError {}
/** 412: a decision's `args_digest` no longer matches the pending call. */
export class PreconditionFailed extends CairnApiError {}
/** 413: the request body is larger than the producer accepts. */
export class PayloadTooLarge extends CairnApiError {}
/** 422: the body is well formed but not acceptable (too long, invalid edited args, idempotency key reused with another body). */
export class Unprocessable extends CairnApiError {}
/** 429: too many runs (per session, or rate limited), or `budget_exhausted`: the tenant's day budget is spent (`retryAfterMs`: until the next UTC day). */
export class TooManyRequests extends CairnApiError {}
/** 5xx: the producer failed or is not ready. */
export class ServerError extends CairnApiError {}

/** `runs.wait` gave up before the run finished. */
export class WaitTimeout extends CairnClientError {
  constructor(
    readonly runId: string,
    readonly timeoutMs: number,
  ) {
    super(`run ${runId} did not finish within ${timeoutMs} ms`);
  }
}

/** The error class for an error answer, chosen by status (and, for 404, by the server's code). */
export function apiErrorFor(
  status: number,
  body: Partial<ErrorBody>,
  method: string,
  path: string,
  retryAfterMs?: number,
): CairnApiError {
  const ErrorClass = errorClassFor(status, body.error);
  return new ErrorClass(status, body, method, path, retryAfterMs);
}

/** A `Retry-After` header (delay in seconds, or an HTTP date) in ms from `now`; undefined when absent or unreadable. */
export function retryAfterMsOf(
  header: string | null,
  now: number = Date.now(),
): number | undefined {
  if (header === null || header.trim() === '') return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return seconds >= 0 ? seconds * 1000 : undefined;
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

function errorClassFor(status: number, code: string | undefined): typeof CairnApiError {
  switch (status) {
    case 400:
      return BadRequest;
    case 401:
      return Unauthorized;
    case 403:
      return Forbidden;
    case 404:
      return code === 'run_not_found' ? RunNotFound : NotFound;
    case 409:
      return Conflict;
    case 410:
      return Gone;
    case 412:
      return PreconditionFailed;
    case 413:
      return PayloadTooLarge;
    case 422:
      return Unprocessable;
    case 429:
      return TooManyRequests;
    default:
      return status >= 500 ? ServerError : CairnApiError;
  }
}
