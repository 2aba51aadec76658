/** Base class of the errors only the producer throws: a request the HTTP layer refuses before reaching the service, or a wait that gave up. */
export class ProducerError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The request body is not valid JSON. */
export class InvalidJsonError extends ProducerError {}

/** The request body is larger than the configured limit. */
export class PayloadTooLargeError extends ProducerError {
  constructor(readonly maxBytes: number) {
    super(`request body exceeds ${maxBytes} bytes`);
  }
}

/** A path or query parameter, or a header, has a bad value. */
export class InvalidParameterError extends ProducerError {
  constructor(
    readonly parameter: string,
    message: string,
  ) {
    super(`${parameter}: ${message}`);
  }
}

/** The request carries no valid API key. */
export class UnauthorizedError extends ProducerError {}

/** The resource (a session, for instance) does not exist. */
export class NotFoundError extends ProducerError {}

/** The API key is valid but may not do this (a read-only key asking to write). */
export class ForbiddenError extends ProducerError {}

/** A request body that is not JSON (`Content-Type` other than `application/json`). */
export class UnsupportedMediaTypeError extends ProducerError {
  constructor(readonly contentType: string) {
    super(`request body must be application/json, got "${contentType.slice(0, 100)}"`);
  }
}

/** A body field (`input`, `metadata`) is longer than the configured limit. */
export class FieldTooLongError extends ProducerError {
  constructor(
    readonly field: string,
    readonly length: number,
    readonly maxChars: number,
  ) {
    super(`${field} is ${length} characters long; the limit is ${maxChars}`);
  }
}

/** A JSON body whose shape no schema should even see: nested too deeply, or holding NUL characters or lone surrogates. */
export class InvalidBodyError extends ProducerError {
  constructor(
    readonly path: string,
    readonly problem: string,
  ) {
    super(path ? `${path}: ${problem}` : problem);
  }
}

/** The session already holds as many runs as it may. */
export class TooManyRunsError extends ProducerError {
  constructor(
    readonly sessionId: string,
    readonly maxRuns: number,
  ) {
    super(`session ${sessionId} already has ${maxRuns} runs, the most a session may hold`);
  }
}

/** The key (or, with auth off, the client address) already holds as many open event streams as it may. */
export class TooManyStreamsError extends ProducerError {
  constructor(
    /** Whose streams are counted: `API key` or `client address`. */
    readonly holder: string,
    readonly maxStreams: number,
    /** Seconds after which a retry may find a free slot. */
    readonly retryAfterS: number,
  ) {
    super(
      `this ${holder} already has ${maxStreams} open event streams, the most it may hold at once; close one and retry`,
    );
  }
}

/** `ProducerService.waitForRun` gave up before the run reached a terminal status. */
export class RunWaitTimeoutError extends ProducerError {
  constructor(
    readonly runId: string,
    readonly timeoutMs: number,
    readonly status: string,
  ) {
    super(`run ${runId} did not finish within ${timeoutMs} ms (status ${status})`);
  }
}
