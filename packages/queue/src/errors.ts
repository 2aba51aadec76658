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
