import type { RateLimitInfo } from './capacity/model-capacity.js';
/** Base class of every error Cairn's engine throws; `name` is the subclass's name. */
export class CairnError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** A bad definition or bad input, thrown before any side effect. */
export class UserError extends CairnError {}

/** No run has this id. */
export class RunNotFoundError extends CairnError {
  constructor(readonly runId: string) {
    super(`run ${runId} not found`);
  }
}

/** No session has this id (for the caller: a tenant never sees another tenant's session). */
export class SessionNotFoundError extends CairnError {
  constructor(readonly sessionId: string) {
    super(`session ${sessionId} not found`);
  }
}

/** An `Idempotency-Key` already created a run from a different request (HTTP 422). */
export class IdempotencyKeyReusedError extends UserError {
  constructor(
    readonly idempotencyKey: string,
    readonly runId: string,
  ) {
    super(
      `Idempotency-Key ${JSON.stringify(idempotencyKey)} already created run ${runId} from a different request`,
    );
  }
}

/** The run's status forbids the asked-for continue (CANCELLED, or COMPLETED without fork). */
export class RunNotContinuableError extends CairnError {
  constructor(
    readonly runId: string,
    readonly status: string,
    reason: string,
  ) {
    super(`run ${runId} is ${status}: ${reason}`);
  }
}

/** A write was refused because another execution has claimed the run since (fencing). */
export class LeaseLostError extends CairnError {
  constructor(
    readonly runId: string,
    readonly epoch: number,
  ) {
    super(`run ${runId}: epoch ${epoch} no longer holds the run`);
  }
}

/**
 * A checkpoint or final write failed for a reason other than fencing (the
 * store unreachable, the connection dropped mid-commit). The execution stops
 * without writing anything more, not even ERROR: the run stays claimable and
 * resumes from its last committed checkpoint when its job is retried.
 */
export class CheckpointWriteError extends CairnError {
  constructor(
    readonly runId: string,
    options: { cause: unknown },
  ) {
    super(
      `run ${runId}: checkpoint write failed: ${options.cause instanceof Error ? options.cause.message : String(options.cause)}`,
      options,
    );
  }
}

/** The registry has no agent or team by this name. */
export class EntityNotFoundError extends CairnError {
  constructor(
    readonly kind: string,
    readonly entityName: string,
    message = `no ${kind} named "${entityName}" in the registry`,
  ) {
    super(message);
  }
}

/**
 * A plain name that two different members share (each in its own team):
 * no entity is picked; the error lists the member paths to use instead.
 */
export class AmbiguousEntityError extends EntityNotFoundError {
  constructor(
    kind: string,
    entityName: string,
    readonly candidates: readonly string[],
  ) {
    super(
      kind,
      entityName,
      `${kind} "${entityName}" is ambiguous: use ${candidates.map((c) => JSON.stringify(c)).join(' or ')}`,
    );
  }
}

/**
 * The run's entity is not in this worker's registry (or is there with
 * another definition than the run's, `definition` set), but a worker first
 * left it (since it last changed) less than the version grace period ago: a
 * rolling deploy may still bring (or keep) a worker that has it, so the job
 * is retried without claiming the run.
 */
export class EntityAwaitingDeployError extends CairnError {
  constructor(
    readonly runId: string,
    readonly kind: string,
    readonly entityName: string,
    readonly graceLeftMs: number,
    readonly definition?: { runHash: string; workerHash: string },
  ) {
    super(
      definition
        ? `run ${runId}: started on definition ${definition.runHash} of ${kind} "${entityName}", this worker has ${definition.workerHash}; leaving it for a worker with ${definition.runHash} for ${graceLeftMs} ms more`
        : `run ${runId}: no ${kind} named "${entityName}" in this worker's registry yet; retrying for ${graceLeftMs} ms more`,
    );
  }
}

/**
 * The run started on another definition of its entity than the worker's,
 * and no worker with the run's definition took it within the version grace
 * period. Continuable: `continue { "upgrade": true }` resumes it on the new one.
 */
export class DefinitionChangedError extends CairnError {
  constructor(
    readonly runId: string,
    readonly kind: string,
    readonly entityName: string,
    readonly runHash: string,
    readonly workerHash: string,
  ) {
    super(
      `run ${runId}: ${kind} "${entityName}" changed: the run started on definition ${runHash}, the workers have ${workerHash}; ` +
        'continue with { "upgrade": true } to resume it on the new definition',
    );
  }
}

/** The run's stored state (its schema version or a message) cannot be read by this code. */
export class StoredStateError extends CairnError {
  constructor(
    readonly runId: string,
    readonly problem: string,
  ) {
    super(`run ${runId}: stored state does not parse: ${problem}`);
  }
}

/** The run was claimed more than `CAIRN_MAX_ATTEMPTS` times with no new checkpoint in between. */
export class AttemptsExhaustedError extends CairnError {
  constructor(
    readonly runId: string,
    readonly claims: number,
    readonly maxAttempts: number,
  ) {
    super(
      `run ${runId}: claimed ${claims} times without a new checkpoint (CAIRN_MAX_ATTEMPTS=${maxAttempts}); it crashes at the same point every time`,
    );
  }
}

/** A read of the store failed before the run was claimed: the job is retried. */
export class StoreUnavailableError extends CairnError {
  constructor(
    readonly runId: string,
    options: { cause: unknown },
  ) {
    super(
      `run ${runId}: the store could not be read: ${options.cause instanceof Error ? options.cause.message : String(options.cause)}`,
      options,
    );
  }
}

/** A member run of a team ended without an answer. */
export class MemberRunFailedError extends CairnError {
  constructor(
    readonly memberRunId: string,
    readonly member: string,
    readonly status: string,
    reason: string,
  ) {
    super(`member "${member}" ended ${status}: ${reason}`);
  }
}

/**
 * A COMPLETED or ERROR finish found a continue request waiting that this
 * execution has not applied: it takes the input in and goes on.
 */
export class ContinueArrivedError extends CairnError {
  constructor(
    readonly runId: string,
    readonly requestId: string,
  ) {
    super(`run ${runId}: continue request ${requestId} arrived before the finish`);
  }
}

/** Another continue of the run waits to be applied; its input would be dropped, so this one is refused (HTTP 409). */
export class ContinuePendingError extends CairnError {
  constructor(readonly runId: string) {
    super(
      `run ${runId} already has a continue waiting to be applied; send this input once the run has taken that one in`,
    );
  }
}

/** The abort reason an execution gets when a cancel was requested for its run. */
export class CancelRequestedError extends CairnError {
  constructor(readonly runId: string) {
    super(`run ${runId}: cancel requested`);
  }
}

/** The signal an execution runs under was aborted by an operator's `suspend { now: true }`: the run stops at its last checkpoint, PAUSED. */
export class SuspendRequestedError extends CairnError {
  constructor(
    readonly runId: string,
    /** The run the suspend names (the root, or a member of its tree). */
    readonly targetRunId: string,
  ) {
    super(`run ${runId}: suspend requested (now)`);
  }
}

/** A model call failed; `retryable` says whether backing off and trying again may help. */
export class ModelError extends CairnError {
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly status?: number,
    options?: { cause?: unknown; rateLimit?: RateLimitInfo },
  ) {
    super(message, options);
    this.rateLimit = options?.rateLimit;
  }

  /**
   * Set on a provider's 429 (what its `retry-after` and `x-ratelimit-*`
   * headers said, possibly nothing): the request was refused for capacity,
   * never a failure of the run.
   */
  readonly rateLimit: RateLimitInfo | undefined;
}

/** The run took more model turns than its `maxTurns` allows. */
export class MaxTurnsExceededError extends CairnError {
  constructor(
    readonly runId: string,
    readonly maxTurns: number,
  ) {
    super(`run ${runId} exceeded maxTurns (${maxTurns}) without a final answer`);
  }
}

/**
 * The model asked for more tool calls in one turn than `MAX_TOOL_CALLS_PER_TURN`
 * allows: the run ends in ERROR without the turn; `continue` asks the model again.
 */
export class TooManyToolCallsError extends ModelError {
  constructor(
    readonly runId: string,
    readonly toolCalls: number,
    /** The refusal, naming the cap. */
    problem: string,
  ) {
    super(`run ${runId}: the model asked for ${problem}`, false);
  }
}

/**
 * The run passed its deadline (`deadline_ms` at its creation, or its
 * entity's `maxDurationMs`; a member run's is its team's): its in-flight
 * model and tool calls were aborted and it ended in ERROR. `continue` with a
 * new `deadline_ms` resumes it.
 */
export class DeadlineExceededError extends CairnError {
  constructor(
    readonly runId: string,
    readonly deadlineAt: Date,
  ) {
    super(
      `run ${runId} passed its deadline (${deadlineAt.toISOString()}); continue it with a new deadline_ms to resume it`,
    );
  }
}

/** Exhaustiveness guard for `switch` statements over unions. */
export function assertNever(value: never): never {
  throw new Error(`unexpected value: ${JSON.stringify(value)}`);
}

/** Base of the errors a decision on a pending action can meet; `actionId` names the action. */
export class DecisionError extends CairnError {
  constructor(
    readonly actionId: string,
    message: string,
  ) {
    super(message);
  }
}

/** No pending action by this id in the run's tree (HTTP 404). */
export class ActionNotFoundError extends DecisionError {
  constructor(
    actionId: string,
    readonly runId: string,
  ) {
    super(actionId, `run ${runId} has no pending action ${actionId}`);
  }
}

/** Another decision is already recorded for the action, or its run is no longer PAUSED (HTTP 409). */
export class DecisionConflictError extends DecisionError {}

/** The action expired before this decision arrived (HTTP 410). */
export class ActionExpiredError extends DecisionError {
  constructor(actionId: string) {
    super(actionId, `action ${actionId} expired before it was decided`);
  }
}

/** The decision's `args_digest` is not the digest of the action's arguments: the caller saw other arguments (HTTP 412). */
export class ArgsDigestMismatchError extends DecisionError {
  constructor(
    actionId: string,
    readonly expected: string,
    readonly given: string,
  ) {
    super(
      actionId,
      `action ${actionId}: args_digest ${given} does not match the call's arguments (${expected})`,
    );
  }
}

/** The decision does not fit the action: edited arguments invalid for the tool, or a decision type the action's kind does not take (HTTP 422). */
export class InvalidDecisionError extends DecisionError {}

/** The decider's key may not decide this action: a tenant-scope budget action needs an admin key (HTTP 403); nothing is recorded. */
export class DecisionForbiddenError extends DecisionError {}

/**
 * A request asks for more than its entity's cap allows (`caps` of an agent or a team): a budget
 * limit or a deadline above it (HTTP 400). `field` names the request's field, `cap` the entity's option.
 */
export class CapExceededError extends UserError {
  constructor(
    readonly field: string,
    readonly value: number,
    /** The entity option that caps it (`caps.budget.maxCostUsd`, `caps.maxDurationMs`). */
    readonly cap: string,
    readonly capValue: number,
    entity: string,
    hint = '',
  ) {
    super(
      `${field} (${value}) is above ${entity}'s cap of ${capValue} (${cap})${hint ? `; ${hint}` : ''}`,
    );
  }
}

/** A person rejected raising a run's budget, or going on past its tenant's spent day (its budget action): the run ends in ERROR. */
export class BudgetExceededError extends CairnError {
  constructor(
    readonly runId: string,
    readonly actionId: string,
    reason: string,
    /** Whose budget was spent: the run's (its tree's) or its tenant's day. */
    readonly scope: 'run' | 'tenant' = 'run',
  ) {
    super(
      `run ${runId}: ${scope === 'tenant' ? "its tenant's day budget is spent and going on was rejected" : 'its budget is spent and raising it was rejected'} (action ${actionId})${reason ? `: ${reason}` : ''}`,
    );
  }
}

/** A tenant whose day budget (`CAIRN_TENANT_BUDGETS`) is spent creates no run until the next UTC day (HTTP 429 `budget_exhausted`). */
export class TenantBudgetExhaustedError extends CairnError {
  constructor(
    readonly tenantId: string,
    /** The spent UTC day, `YYYY-MM-DD`. */
    readonly day: string,
    readonly spentUsd: number,
    readonly budgetUsd: number,
    /** Seconds until the next UTC day, when the tenant may create runs again. */
    readonly retryAfterS: number,
  ) {
    super(
      `tenant ${tenantId} has spent its budget for ${day} (UTC): $${spentUsd} of $${budgetUsd} (CAIRN_TENANT_BUDGETS); new runs are accepted again in ${retryAfterS} s, at the next UTC day`,
    );
  }
}

/** A gated call's action expired with `onTimeout: 'error'`: the run ends in ERROR. */
export class ApprovalTimeoutError extends CairnError {
  constructor(
    readonly runId: string,
    readonly actionId: string,
    readonly tool: string,
  ) {
    super(`run ${runId}: nobody decided action ${actionId} (tool "${tool}") in time`);
  }
}

/** A run file (`npm run replay -- --export`) that cannot be read: not JSON, another schema or version, or a malformed run. */
export class RunFileError extends UserError {
  constructor(
    /** The file, or a label of where the content came from. */
    readonly source: string,
    /** What is wrong, for a person. */
    readonly problem: string,
  ) {
    super(`${source}: ${problem}`);
  }
}
