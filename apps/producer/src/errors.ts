/** Base class of the errors only the producer throws: a request the HTTP layer refuses before reaching a client. */
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
