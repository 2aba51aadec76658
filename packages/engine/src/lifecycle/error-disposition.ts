import {
  AttemptsExhaustedError,
  assertNever,
  BudgetExceededError,
  CairnError,
  CheckpointWriteError,
  DeadlineExceededError,
  DefinitionChangedError,
  EntityAwaitingDeployError,
  EntityNotFoundError,
  LeaseLostError,
  MaxTurnsExceededError,
  MemberRunFailedError,
  ModelError,
  StoredStateError,
  StoreUnavailableError,
  UserError,
} from '../errors.js';

/**
 * Every class of error the lifecycle tells apart. A cancel is not among them:
 * an execution whose signal was aborted by a cancel request ends CANCELLED.
 */
export const ERROR_KINDS = [
  'lease-lost',
  'checkpoint-write',
  'store-unavailable',
  'entity-awaiting-deploy',
  'entity-not-found',
  'definition-changed',
  'stored-state',
  'attempts-exhausted',
  'model',
  'max-turns',
  'deadline',
  'member-failed',
  'budget',
  'user',
  'unexpected',
] as const;
/** One of {@link ERROR_KINDS}. */
export type ErrorKind = (typeof ERROR_KINDS)[number];

/**
 * What an error does to the job and the run: `retry-job` (write nothing, the
 * job is retried and resumes from the last checkpoint), `end-run-in-error`
 * (persist ERROR; continuable by hand), `stop-silently` (another execution
 * holds the run: write nothing, do not complete the job).
 */
export type ErrorDisposition = 'retry-job' | 'end-run-in-error' | 'stop-silently';

/** An error as it crosses a thread boundary: name, message and its kind (the class). */
export interface SerializedError {
  name: string;
  message: string;
  kind: ErrorKind;
}

/** An error that crossed a thread boundary: keeps the kind of the class it was thrown as. */
export class RemoteError extends CairnError {
  constructor(
    readonly kind: ErrorKind,
    readonly originalName: string,
    message: string,
  ) {
    super(message);
  }
}

/** The kind of an error: by its class, or by the kind it carried across a thread. */
export function errorKindOf(error: unknown): ErrorKind {
  if (error instanceof RemoteError) return error.kind;
  if (error instanceof LeaseLostError) return 'lease-lost';
  if (error instanceof CheckpointWriteError) return 'checkpoint-write';
  if (error instanceof StoreUnavailableError) return 'store-unavailable';
  if (error instanceof EntityAwaitingDeployError) return 'entity-awaiting-deploy';
  if (error instanceof EntityNotFoundError) return 'entity-not-found';
  if (error instanceof DefinitionChangedError) return 'definition-changed';
  if (error instanceof StoredStateError) return 'stored-state';
  if (error instanceof AttemptsExhaustedError) return 'attempts-exhausted';
  if (error instanceof ModelError) return 'model';
  if (error instanceof MaxTurnsExceededError) return 'max-turns';
  if (error instanceof DeadlineExceededError) return 'deadline';
  if (error instanceof MemberRunFailedError) return 'member-failed';
  if (error instanceof BudgetExceededError) return 'budget';
  if (error instanceof UserError) return 'user';
  return 'unexpected';
}

/** The one mapping of error kinds to what happens to the job and the run. */
export function dispositionOf(kind: ErrorKind): ErrorDisposition {
  switch (kind) {
    case 'lease-lost':
      return 'stop-silently';
    case 'checkpoint-write':
    case 'store-unavailable':
    case 'entity-awaiting-deploy':
      return 'retry-job';
    case 'entity-not-found':
    case 'definition-changed':
    case 'stored-state':
    case 'attempts-exhausted':
    case 'model':
    case 'max-turns':
    case 'deadline':
    case 'member-failed':
    case 'budget':
    case 'user':
    case 'unexpected':
      return 'end-run-in-error';
    default:
      return assertNever(kind);
  }
}

/** {@link dispositionOf} the error's kind. */
export function dispositionOfError(error: unknown): ErrorDisposition {
  return dispositionOf(errorKindOf(error));
}

/** Plain data for a thread message; {@link deserializeError} gives back an error of the same kind. */
export function serializeError(error: unknown): SerializedError {
  const kind = errorKindOf(error);
  if (error instanceof RemoteError)
    return { name: error.originalName, message: error.message, kind };
  if (error instanceof Error) return { name: error.name, message: error.message, kind };
  return { name: 'Error', message: String(error), kind };
}

/** The error a {@link SerializedError} stands for: a {@link RemoteError} of its kind. */
export function deserializeError(serialized: SerializedError): RemoteError {
  return new RemoteError(serialized.kind, serialized.name, serialized.message);
}

/** Whether a continue may help (shown as `error.retryable`); undefined when it may. */
export function retryableHint(error: unknown): boolean | undefined {
  const kind = errorKindOf(error);
  if (kind === 'model') return (error as ModelError).retryable;
  if (kind === 'max-turns' || kind === 'user') return false;
  return undefined;
}
