/** Base class of every error `@cairn/services` throws; `name` is the subclass's name. */
export class ServiceError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** A backing service (Postgres, Redis) could not be started or stopped; `output` holds its log or command output. */
export class ServiceStartError extends ServiceError {
  constructor(
    readonly service: 'postgres' | 'redis',
    message: string,
    readonly output = '',
    options?: { cause?: unknown },
  ) {
    super(output ? `${service}: ${message}\n${output.trim()}` : `${service}: ${message}`, options);
  }
}

/** A test helper needs an environment variable that the vitest global setup should have set. */
export class MissingServiceUrlError extends ServiceError {
  constructor(readonly variable: string) {
    super(
      `${variable} is not set: run tests through the root vitest config (its globalSetup starts the services) or set ${variable} yourself`,
    );
  }
}
