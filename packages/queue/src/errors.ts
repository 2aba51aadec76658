/** Base class of every error `@cairn/queue` throws; `name` is the subclass's name. */
export class QueueError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** Job data that does not match the catalog's schema for its job name. */
export class InvalidJobError extends QueueError {
  constructor(
    readonly jobName: string,
    readonly issues: string,
  ) {
    super(`invalid "${jobName}" job: ${issues}`);
  }
}

/** An environment variable with a bad value; the message names the variable. */
export class ConfigError extends QueueError {
  constructor(
    readonly variable: string,
    problem: string,
  ) {
    super(`${variable}: ${problem}`);
  }
}

/** Redis or Postgres could not be reached at start. */
export class ServiceUnreachableError extends QueueError {
  /** The service's URL with its password masked: loggers serialize this field. */
  readonly url: string;

  constructor(
    readonly service: 'Redis' | 'Postgres',
    url: string,
    options?: { cause?: unknown },
  ) {
    super(`${service} is unreachable at ${redactUrl(url)}: ${causeMessage(options?.cause)}`, options);
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

/** `CairnClient.waitForRun` gave up before the run reached a terminal status. */
export class RunWaitTimeoutError extends QueueError {
  constructor(
    readonly runId: string,
    readonly timeoutMs: number,
    readonly status: string,
  ) {
    super(`run ${runId} did not finish within ${timeoutMs} ms (status ${status})`);
  }
}
