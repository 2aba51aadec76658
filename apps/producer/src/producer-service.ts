import { randomUUID } from 'node:crypto';
import {
  Engine,
  RunNotContinuableError,
  IDLE_STATUSES,
  type CreateRunRequest,
  type CreatedRun,
  type DecisionsResult,
  type EntityRef,
  type ForkedFrom,
  type ForkRequest,
  type PendingActionRecord,
  type PostedDecision,
  type Registry,
  type RunRecord,
  type RunStatus,
  type TenantBudgets,
} from '@cairn/engine';
import type { ResumeOutcome, SuspendOutcome } from '@cairn/engine/lifecycle';
import {
  openStore,
  ServedEntityCatalog,
  type FleetOverview,
  type RunListFilter,
  type RunListPage,
  type RunMessagesPage,
  type RunTreeCursor,
  type RunTreeEvents,
  type RunView,
  type RunViewOptions,
  type SessionKey,
  type SessionView,
  type StoreParts,
  type StoredEvent,
} from '@cairn/store';
import { RunEngine, RunQueue, type RunQueueOptions } from '@cairn/queue';
import { openStoreDb } from '@cairn/runtime';
import { RunWaitTimeoutError } from './errors.js';
import type { ContinueRunOptions, ContinueRunResult, ProducerClient } from './producer-client.js';

/** What {@link ProducerService.connect} takes. */
export interface ProducerServiceConfig {
  databaseUrl: string;
  /** The run queue; `databaseUrl` is the Postgres backend's database unless it names another. */
  queue: Omit<RunQueueOptions, 'databaseUrl'> & { databaseUrl?: string };
  /**
   * The entities runs may name (validated before a run is created).
   * @defaultValue the entities workers recorded in the store ({@link ServedEntityCatalog}): no tool code, no model key;
   * while no live worker has announced any, every name is accepted and its run waits for a worker
   */
  registry?: Registry;
  /** Apply the store's migrations first (tests, demo). @defaultValue false */
  migrate?: boolean;
  /** `CAIRN_PG_NAMED_STATEMENTS`: see `createDb`'s option. @defaultValue true */
  namedStatements?: boolean;
  /**
   * USD each tenant may spend per UTC day (`CAIRN_TENANT_BUDGETS`): a spent tenant's new runs are
   * refused with `TenantBudgetExhaustedError` (429). @defaultValue none
   */
  tenantBudgets?: TenantBudgets;
}

/** What the service's constructor takes: wired dependencies. */
export interface ProducerServiceDeps {
  engine: Engine;
  /** The store's parts (`openStore`): cancels run on its writes, the API's reads on its reads, decisions on its hitl part. */
  store: StoreParts;
  runQueue: RunQueue;
  /** Closed by `close()`. */
  onClose?: () => Promise<void>;
  /** How long `cancelRun` waits for the worker holding a run before cancelling it itself. @defaultValue 5000 */
  cancelGraceMs?: number;
  /** The top-level entities runs may be created of (the MCP server's start tools). @defaultValue none */
  servedEntities?: () => Promise<EntityRef[]>;
}

/**
 * The producer's handle on Cairn, behind the routes' {@link ProducerClient}
 * port: creates runs and enqueues them, continues, cancels, decides and reads
 * them, by the engine's lifecycle moves, whose job intents it carries out on
 * the run queue (`@cairn/queue`), and the store's reads (`@cairn/store`).
 * Code beside the workers may use it instead of the HTTP API.
 *
 * @example
 * const service = await ProducerService.connect({ databaseUrl, queue: { redisUrl } });
 * const run = await service.enqueueRun({ entity: { kind: 'team', name: 'research-team' }, input: 'Research X' });
 * const done = await service.waitForRun(run.runId, { timeoutMs: 60_000 });
 */
export class ProducerService implements ProducerClient {
  readonly engine: Engine;
  readonly store: StoreParts;
  readonly runQueue: RunQueue;
  /** Every move of a run this service makes: decided by the lifecycle, its jobs enqueued. */
  private readonly runs: RunEngine;
  private readonly onClose?: () => Promise<void>;
  private readonly listServedEntities: () => Promise<EntityRef[]>;

  constructor(deps: ProducerServiceDeps) {
    this.engine = deps.engine;
    this.store = deps.store;
    this.runQueue = deps.runQueue;
    this.onClose = deps.onClose;
    this.runs = new RunEngine({
      engine: deps.engine,
      hitl: deps.store.hitl,
      cancels: deps.store.writes,
      runQueue: deps.runQueue,
      cancelGraceMs: deps.cancelGraceMs ?? 5000,
      newActionId: () => `act_${randomUUID()}`,
      recovery: deps.store.ops,
    });
    this.listServedEntities = deps.servedEntities ?? (() => Promise.resolve([]));
  }

  /**
   * Connects to Postgres and the queue; throws `ServiceUnreachableError` naming Redis or Postgres,
   * `StoreNotMigratedError` (naming `npm run migrate`) when the store's migrations are pending.
   */
  static async connect(config: ProducerServiceConfig): Promise<ProducerService> {
    const db = await openStoreDb(config.databaseUrl, {
      migrate: config.migrate ?? false,
      ...(config.namedStatements === undefined ? {} : { namedStatements: config.namedStatements }),
    });
    let runQueue: RunQueue;
    try {
      runQueue = await RunQueue.open({
        ...config.queue,
        databaseUrl: config.queue.databaseUrl ?? config.databaseUrl,
      });
    } catch (error) {
      await db.destroy();
      throw error;
    }
    const store = openStore(db);
    const served = new ServedEntityCatalog(db);
    const { registry } = config;
    const engine = new Engine({
      store: store.writes,
      catalog: registry ?? served,
      workerId: 'producer',
      tenantBudgets: config.tenantBudgets,
    });
    return new ProducerService({
      engine,
      store,
      runQueue,
      servedEntities: registry
        ? () => Promise.resolve(registry.list().filter((ref) => !ref.name.includes('/')))
        : () => served.live(),
      onClose: async () => {
        await runQueue.close();
        await db.destroy();
      },
    });
  }

  /** The top-level entities runs may be created of: those live workers serve (or the registry's). */
  servedEntities(): Promise<EntityRef[]> {
    return this.listServedEntities();
  }

  /**
   * Creates the run (PENDING) and enqueues its `run` job; if the enqueue fails, the reconciler picks the run up.
   * Throws `EntityNotFoundError` for a name the catalog refuses (`EntityNotServedError`, listing what live workers serve),
   * `TenantBudgetExhaustedError` when the request's tenant has spent its day budget (`tenantBudgets`).
   * A request whose idempotency key created a run before gets that run back (`replayed`), enqueued nothing.
   */
  enqueueRun(request: CreateRunRequest): Promise<CreatedRun> {
    return this.runs.createRun(request);
  }

  /**
   * Applies the continue rules (`RunNotFoundError`, `RunNotContinuableError`) and
   * carries out the job the lifecycle's `continueIntents` asks for: `resume` a
   * `continue` job (a no-op while the run has a live job), `fork` a `run` job
   * for the new run, `already-queued` none.
   */
  continueRun(runId: string, options: ContinueRunOptions = {}): Promise<ContinueRunResult> {
    return this.runs
      .continueRun(runId, {
        fork: options.fork,
        input: options.input,
        upgrade: options.upgrade,
        deadlineMs: options.deadlineMs,
      })
      .catch((error: unknown) => this.namePendingActions(error));
  }

  /**
   * Forks a run at a checkpoint (the lifecycle's `fork` move: `RunNotFoundError`,
   * `RunNotContinuableError` for a PENDING run, `InvalidForkPointError`) and
   * enqueues the fork's `run` job; a request whose idempotency key forked
   * before gets that fork back (`replayed`), enqueued nothing.
   */
  forkRun(runId: string, request: ForkRequest): Promise<CreatedRun & { forkedFrom: ForkedFrom }> {
    return this.runs.forkRun(runId, request);
  }

  /** A continue refused because the run is PAUSED names the actions it waits for. */
  private async namePendingActions(error: unknown): Promise<never> {
    if (!(error instanceof RunNotContinuableError) || error.status !== 'PAUSED') throw error;
    const ids = (await this.store.hitl.listPendingActions(error.runId)).map((a) => a.actionId);
    throw new RunNotContinuableError(
      error.runId,
      error.status,
      `it resumes by itself once its pending actions are decided (${ids.join(', ') || 'none left'}): POST /v1/runs/${error.runId}/decisions`,
    );
  }

  /**
   * Cancels a run by the lifecycle's `cancel` move: a queued run (or one whose
   * job is gone) is cancelled at once; a running one by the worker holding it,
   * or, if that worker does not within `cancelGraceMs` (dead), by this
   * request. Throws `RunNotFoundError` or `RunAlreadyTerminalError` (from `@cairn/store`).
   */
  cancelRun(runId: string): Promise<RunRecord> {
    return this.runs.cancelRun(runId);
  }

  /**
   * Suspends a run by the lifecycle's `suspend` move: a queued or paused run at
   * once (a queued run's job removed), a running one at its next checkpoint
   * boundary by the worker holding it (`now`: its calls in flight aborted).
   * Throws `RunNotFoundError` or `RunAlreadyTerminalError`.
   */
  suspendRun(runId: string, options: { now?: boolean } = {}): Promise<SuspendOutcome> {
    return this.runs.suspendRun(runId, options);
  }

  /**
   * Resumes a suspended run: approves its `suspended` action (compare and set)
   * and enqueues the resume; a second resume is a no-op (`already`). Throws
   * `RunNotFoundError`, or `RunNotContinuableError` for a run never suspended or finished.
   */
  resumeRun(runId: string): Promise<ResumeOutcome> {
    return this.runs.resumeRun(runId);
  }

  /** The undecided actions of the run's tree (a team lists its members', with their `memberPath`); throws `RunNotFoundError`. */
  listPendingActions(runId: string): Promise<PendingActionRecord[]> {
    return this.store.hitl.listPendingActions(runId);
  }

  /**
   * Records decisions on the pending actions of a run's tree (the root run or
   * a member run), all or nothing, each by compare-and-set: the engine's
   * `decide` move, as `decider`'s key makes it (a tenant key may not decide its
   * tenant's spent day, nor raise a budget past its entity's caps); when it
   * decided the tree's last pending action, the resume of its root run it asks
   * for is enqueued. Throws `RunNotFoundError`, `ActionNotFoundError`,
   * `DecisionConflictError`, `ActionExpiredError`, `ArgsDigestMismatchError`,
   * `InvalidDecisionError`, `DecisionForbiddenError` or `CapExceededError`.
   */
  decide(
    runId: string,
    decisions: readonly PostedDecision[],
    decider: { tenantId: string | null } = { tenantId: null },
  ): Promise<DecisionsResult> {
    return this.runs.decide(runId, decisions, decider);
  }

  /** The run as the API returns it, or undefined. */
  getRun(runId: string, options: RunViewOptions = {}): Promise<RunView | undefined> {
    return this.store.reads.getRunView(runId, options);
  }

  /** A page of run summaries, newest first. */
  listRuns(filter: RunListFilter): Promise<RunListPage> {
    return this.store.reads.listRuns(filter);
  }

  /** A page of the run's messages and their total. */
  listRunMessages(
    runId: string,
    page: { offset: number; limit: number },
  ): Promise<RunMessagesPage> {
    return this.store.reads.listRunMessages(runId, page);
  }

  /** The run's status alone (one indexed read), or undefined when there is no such run. */
  async getRunStatus(runId: string): Promise<RunStatus | undefined> {
    return (await this.store.reads.getRun(runId))?.status;
  }

  /** The tenant that owns the run (null: an admin key's), or undefined when there is no such run: one indexed read. */
  async runOwner(runId: string): Promise<{ tenantId: string | null } | undefined> {
    const run = await this.store.reads.getRun(runId);
    return run && { tenantId: run.tenantId };
  }

  /** The session the run belongs to (its tenant's session of its `sessionId`), or undefined when there is no such run. */
  async runSession(runId: string): Promise<SessionKey | undefined> {
    const run = await this.store.reads.getRun(runId);
    return run && { tenantId: run.tenantId, sessionId: run.sessionId };
  }

  /**
   * Deletes the session (a tenant's, or the no-tenant one) and every run in it, with their messages,
   * tool calls, attempts and events; false when there is no such session. Throws `SessionHasLiveRunsError`
   * (nothing deleted) while one of its runs is unfinished.
   */
  deleteSession(key: SessionKey): Promise<boolean> {
    return this.store.ops.deleteSession(key);
  }

  /** The session (a tenant's, or the no-tenant one) and its runs, or undefined. */
  getSession(key: SessionKey): Promise<SessionView | undefined> {
    return this.store.reads.getSessionView(key);
  }

  /** The run's events after `afterSeq`, in order. */
  listEvents(runId: string, afterSeq = 0, limit?: number): Promise<StoredEvent[]> {
    return this.store.reads.listEvents(runId, afterSeq, limit);
  }

  /**
   * The run's tree (it, then its member runs by creation) and their events
   * after `after` (the last seq read of each run of the tree: in that order, or by run id),
   * each run's in seq order; undefined when there is no such run.
   */
  readRunTreeEvents(runId: string, after: RunTreeCursor): Promise<RunTreeEvents | undefined> {
    return this.store.reads.readRunTreeEvents(runId, after);
  }

  /** Records the sign-out of the run pages' browser session `nonce` until `expiresAt`: every producer on this store refuses it from then on. */
  revokeBrowserSession(nonce: string, expiresAt: Date): Promise<void> {
    return this.store.ops.browserSessions.revoke(nonce, expiresAt);
  }

  /** True when the browser session `nonce` was signed out. */
  isBrowserSessionRevoked(nonce: string): Promise<boolean> {
    return this.store.ops.browserSessions.isRevoked(nonce);
  }

  /** The fleet at a glance for the run list: every run's, or one tenant's. */
  fleetOverview(scope: { tenantId?: string }): Promise<FleetOverview> {
    return this.store.reads.readFleetOverview(scope);
  }

  /** How many runs (member runs included) are in `status` now. */
  countRunsByStatus(status: RunStatus): Promise<number> {
    return this.store.reads.countRunsByStatus(status);
  }

  /** The run's events of the given types, in order. */
  listEventsOfTypes(runId: string, types: readonly string[]): Promise<StoredEvent[]> {
    return this.store.reads.listEventsOfTypes(runId, types);
  }

  /** Resolves with the run once it is idle (`IDLE_STATUSES`); rejects with `RunWaitTimeoutError` after `timeoutMs`. */
  async waitForRun(
    runId: string,
    options: { timeoutMs: number; pollMs?: number },
  ): Promise<RunRecord> {
    const deadline = Date.now() + options.timeoutMs;
    for (;;) {
      const run = await this.store.reads.getRun(runId);
      if (run && IDLE_STATUSES.includes(run.status)) return run;
      if (Date.now() >= deadline) {
        throw new RunWaitTimeoutError(runId, options.timeoutMs, run?.status ?? 'unknown');
      }
      await sleep(options.pollMs ?? 200);
    }
  }

  /** Closes what `connect` opened. */
  async close(): Promise<void> {
    await this.onClose?.();
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
