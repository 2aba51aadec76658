/** Base class of every error `@cairn/runtime` throws; `name` is the subclass's name. */
export class RuntimeError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** An environment variable with a bad value; the message names the variable. */
export class ConfigError extends RuntimeError {
  constructor(
    readonly variable: string,
    problem: string,
  ) {
    super(`${variable}: ${problem}`);
  }
}

/** Redis or Postgres could not be reached at start. */
export class ServiceUnreachableError extends RuntimeError {
  /** The service's URL with its password masked: loggers serialize this field. */
  readonly url: string;

  constructor(
    readonly service: 'Redis' | 'Postgres',
    url: string,
    options?: { cause?: unknown },
  ) {
    super(
      `${service} is unreachable at ${redactUrl(url)}: ${causeMessage(options?.cause)}`,
      options,
    );
    this.url = redactUrl(url);
  }
}

function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '<invalid url>';
  }
}

function causeMessage(cause: unknown): string {
  return cause instanceof Error ? cause.message || cause.name : String(cause);
}
