import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import { LeaseLostError, RunNotFoundError } from '@cairn/engine';
import type {
  CheckpointRecord,
  CreatedRun,
  DecisionsResult,
  Message,
  NewPendingAction,
  PendingActionRecord,
  PostedDecision,
  RunRecord,
  RunStatus,
  RunWaiting,
} from '@cairn/engine';
import {
  type CancelStore,
  type CheckpointDelta,
  type CheckpointStore,
  type Claim,
  type ClaimRequest,
  type DecisionStore,
  type DecisionValidator,
  type ExpiryOutcome,
  type RecoveryPort,
  type RunCursor,
  type RunHistory,
  type RunLease,
  type RunOutcome,
  type RunPastDeadline,
  type SuspendOutcome,
  type TenantDaySpend,
  type TreeResume,
  ContinueArrivedError,
  EXECUTING_STATUS,
  FINISH_WAITS_FOR_CONTINUE,
  type ContinueRequestRecord,
  type NewRun,
} from '@cairn/engine/store';
import {
  readContinueRequest,
  recordContinueRequest,
  type RecordedContinue,
} from './continue-requests.js';
import { createRun } from './create-run.js';
import { ADVISORY_LOCKS, withAdvisoryLock, type AdvisoryLockResult } from './advisory-lock.js';
import { awaitDeploy } from './awaiting-deploy.js';
import { BrowserSessionRevocations } from './browser-session-revocations.js';
import { deleteSession } from './delete-session.js';
import { pruneFinishedRuns, type PruneOptions, type PruneResult } from './retention.js';
import { closeSearchChunks, type SearchChunksResult } from './search-chunks.js';
import { writeDelta } from './write-delta.js';
import { readTenantDaySpend } from './tenant-day-spend.js';
import { claimRun } from './claim-run.js';
import { forceCancel, requestCancel } from './run-cancel.js';
import { listSuspendedActions, suspendRun } from './run-suspend.js';
import type { ForceCancelOptions } from './run-cancel.js';
import { appendEvents, listEvents, listEventsOfTypes } from './run-events.js';
import type { StoredEvent } from './run-events.js';
import type { NewRunEvent } from './stored-delta-events.js';
import { readRunTreeEvents, type RunTreeCursor, type RunTreeEvents } from './run-tree-events.js';
import { toRunRecord, toToolCallRecord, withStoredResult } from './run-row.js';
import { readToolCalls } from './read-tool-calls.js';
import { checkpointEndingAt, listCheckpoints, readHistory } from './run-history.js';
import {
  consumeAction,
  decideActions,
  expireAction,
  insertPendingActions,
  listPendingActions,
  listOverdueActions,
  listResumablePausedRuns,
  listRunActions,
} from './pending-actions.js';
import {
  endPastDeadline,
  listRunsPastDeadline,
  moveDeadline,
  type DeadlineFence,
} from './run-deadline.js';
import { listRuns } from './run-list.js';
import { recordParkedAgain } from './run-parked-again.js';
import { readFleetOverview, type FleetOverview } from './fleet-overview.js';
import type { RunListFilter, RunListPage } from './run-list.js';
import { listRunMessages } from './run-messages-page.js';
import type { RunMessagesPage } from './run-messages-page.js';
import { getRunView, getSessionView } from './run-view.js';
import type { SessionKey } from './session-key.js';
import type { RunView, RunViewOptions, SessionView } from './run-view.js';
import type { Database } from './schema.js';
import { PostgresModelCapacity } from './model-capacity/postgres-model-capacity.js';

/**
 * The engine's `CheckpointStore` on Postgres, its `DecisionStore`,
 * `CancelStore` and `RecoveryStore` primitives (the lifecycle's moves run
 * on them), plus the reads the HTTP API and the queue layer need. Every write after `claimRun`
 * is conditional on the claim's epoch and on status RUNNING. A caller that
 * needs one job of it takes that part (`openStore` returns them: `StoreWrites`,
 * `StoreReads`, `StoreHitl`, `StoreOps` in store-parts.ts); tests construct it whole.
 *
 * @example
 * const store = new PostgresCheckpointStore(createDb(process.env.DATABASE_URL!));
 * const { epoch } = await store.claimRun(runId, { workerId: 'w1', reason: 'run' });
 * await store.commitCheckpoint(runId, epoch, delta);
 */
export class PostgresCheckpointStore
  implements CheckpointStore, DecisionStore, CancelStore, RecoveryPort
{
  /** Signed-out browser sessions of the run pages: what the producer records at sign-out and checks on every page. */
  readonly browserSessions: BrowserSessionRevocations;

  /** The fleet's model limiter on this database (the PostgreSQL queue backend's; Redis holds it otherwise). */
  readonly modelCapacity: PostgresModelCapacity;

  constructor(readonly db: Kysely<Database>) {
    this.browserSessions = new BrowserSessionRevocations(db);
    this.modelCapacity = new PostgresModelCapacity(db);
  }

  /** Resolves once Postgres answers a read of the runs table (a readiness probe); rejects with the driver's error otherwise. */
  async ping(): Promise<void> {
    await this.db.selectFrom('runs').select('run_id').limit(1).execute();
  }

  createRun(run: NewRun): Promise<CreatedRun> {
    return createRun(this.db, run);
  }

  async getRun(runId: string): Promise<RunRecord | undefined> {
    const row = await this.db
      .selectFrom('runs')
      .selectAll()
      .where('run_id', '=', runId)
      .executeTakeFirst();
    return row && toRunRecord(row);
  }

  claimRun(runId: string, claim: ClaimRequest): Promise<Claim> {
    return claimRun(this.db, runId, claim);
  }

  async loadHistory(runId: string): Promise<RunHistory> {
    return this.db
      .transaction()
      .setIsolationLevel('repeatable read')
      .execute(async (trx) => {
        const run = await trx
          .selectFrom('runs')
          .select('last_checkpoint_at_message_index')
          .where('run_id', '=', runId)
          .executeTakeFirst();
        if (!run) throw new RunNotFoundError(runId);
        // A fork's first messages are read through its source.
        const messages = await readHistory(trx, runId, {
          to: run.last_checkpoint_at_message_index,
        });
        const calls = await readToolCalls(trx, [runId]);
        const history = messages.map((m) => m.message);
        return {
          messages: history,
          toolCalls: calls.map((c) => toToolCallRecord(withStoredResult(c, (idx) => history[idx]))),
        };
      });
  }

  async readHistory(runId: string, range: { from: number; to: number }): Promise<Message[]> {
    return (await readHistory(this.db, runId, range)).map((m) => m.message);
  }

  listCheckpoints(runId: string): Promise<CheckpointRecord[]> {
    return listCheckpoints(this.db, runId);
  }

  async checkpointEndingAt(runId: string, messageIndex: number): Promise<number | undefined> {
    const run = await this.getRun(runId);
    if (!run) throw new RunNotFoundError(runId);
    return checkpointEndingAt(this.db, runId, messageIndex, run.lastCheckpointAtMessageIndex);
  }

  commitCheckpoint(runId: string, epoch: number, delta: CheckpointDelta): Promise<number> {
    return writeDelta(this.db, runId, epoch, delta);
  }

  /**
   * One statement; a pause with pending actions commits them in the same
   * transaction. A COMPLETED or ERROR finish refused because a continue
   * request waits throws `ContinueArrivedError` instead of `LeaseLostError`.
   */
  async finishRun(runId: string, epoch: number, outcome: RunOutcome): Promise<RunRecord> {
    try {
      return await this.writeFinish(runId, epoch, outcome);
    } catch (error) {
      if (error instanceof LeaseLostError && FINISH_WAITS_FOR_CONTINUE.includes(outcome.status)) {
        throw await this.finishRefused(runId, epoch);
      }
      throw error;
    }
  }

  private async writeFinish(runId: string, epoch: number, outcome: RunOutcome): Promise<RunRecord> {
    const actions = outcome.status === 'PAUSED' ? (outcome.pendingActions ?? []) : [];
    if (actions.length === 0)
      return toRunRecord(await writeDelta(this.db, runId, epoch, outcome.delta, outcome));
    return this.db.transaction().execute(async (trx) => {
      const row = await writeDelta(trx, runId, epoch, outcome.delta, outcome);
      await insertPendingActions(trx, runId, actions);
      return toRunRecord(row);
    });
  }

  /** Why a fenced finish wrote nothing: a continue arrived (`ContinueArrivedError`), or the lease is lost. */
  private async finishRefused(runId: string, epoch: number): Promise<Error> {
    const run = await this.db
      .selectFrom('runs')
      .select(['epoch', 'status', 'waiting_continue_request'])
      .where('run_id', '=', runId)
      .executeTakeFirst();
    if (
      run?.epoch === epoch &&
      run.status === EXECUTING_STATUS &&
      run.waiting_continue_request !== null
    ) {
      return new ContinueArrivedError(runId, String(run.waiting_continue_request));
    }
    return new LeaseLostError(runId, epoch);
  }

  async findMemberRun(parentRunId: string, toolCallId: string): Promise<RunRecord | undefined> {
    const row = await this.db
      .selectFrom('runs')
      .selectAll()
      .where('parent_run_id', '=', parentRunId)
      .where('parent_tool_call_id', '=', toolCallId)
      .executeTakeFirst();
    return row && toRunRecord(row);
  }

  recordContinueRequest(
    runId: string,
    request: {
      input: string | null;
      upgrade?: boolean;
      statuses: readonly RunStatus[];
      deadlineMs?: number;
    },
  ): Promise<RecordedContinue> {
    return recordContinueRequest(this.db, runId, { ...request, upgrade: request.upgrade ?? false });
  }

  moveDeadline(
    runId: string,
    request: { deadlineMs: number; statuses: readonly RunStatus[] },
  ): Promise<boolean> {
    return moveDeadline(this.db, runId, request.deadlineMs, request.statuses);
  }

  /** A run's job delayed again before its claim: the `waiting` its view shows; true when past its deadline (`recordParkedAgain`). */
  recordParkedAgain(runId: string, waiting: RunWaiting): Promise<boolean> {
    return recordParkedAgain(this.db, runId, waiting);
  }

  readContinueRequest(runId: string, requestId: string): Promise<ContinueRequestRecord | null> {
    return readContinueRequest(this.db, runId, requestId);
  }

  awaitDeploy(runId: string): Promise<number | undefined> {
    return awaitDeploy(this.db, runId);
  }

  async readLease(runId: string): Promise<RunLease | undefined> {
    const row = await this.db
      .selectFrom('runs')
      .select(['epoch', 'status', 'cancel_requested_at', 'suspend_request', 'deadline_at'])
      .where('run_id', '=', runId)
      .executeTakeFirst();
    return (
      row && {
        epoch: row.epoch,
        status: row.status,
        cancelRequestedAt: row.cancel_requested_at,
        suspendRequest: row.suspend_request,
        deadlineAt: row.deadline_at,
      }
    );
  }

  /** Runs whose continue request waits with no execution to apply it (ERROR runs after a failed enqueue), for the reconciler. */
  async listRunsWithWaitingContinue(
    statuses: readonly RunStatus[],
    olderThanMs: number,
    limit?: number,
  ): Promise<RunRecord[]> {
    let query = this.db
      .selectFrom('runs')
      .selectAll()
      .where('waiting_continue_request', 'is not', null)
      .where('status', 'in', statuses)
      .where('updated_at', '<', sql<Date>`now() - make_interval(secs => ${olderThanMs / 1000})`)
      .orderBy('updated_at');
    if (limit !== undefined) query = query.limit(limit);
    const rows = await query.execute();
    return rows.map(toRunRecord);
  }

  async listChildRuns(parentRunId: string): Promise<RunRecord[]> {
    const rows = await this.db
      .selectFrom('runs')
      .selectAll()
      .where('parent_run_id', '=', parentRunId)
      .orderBy('created_at')
      .orderBy('run_id')
      .execute();
    return rows.map(toRunRecord);
  }

  /** Runs `work` while holding the reconciler's advisory lock ({@link ADVISORY_LOCKS}); `{ locked: false }` at once when another process holds it. */
  whileReconciling<T>(work: () => Promise<T>): Promise<AdvisoryLockResult<T>> {
    return withAdvisoryLock(this.db, ADVISORY_LOCKS.reconciler, () => work());
  }

  /** Deletes the session and every run in it (false: no such session); `SessionHasLiveRunsError` while a run is unfinished. */
  deleteSession(key: SessionKey): Promise<boolean> {
    return deleteSession(this.db, key);
  }

  /** Deletes finished runs older than `options.olderThan` in batches, one worker at a time (see {@link pruneFinishedRuns}). */
  pruneFinishedRuns(options: PruneOptions): Promise<PruneResult> {
    return pruneFinishedRuns(this.db, options);
  }

  /** Indexes the run list search's full chunks and merges small ones, one worker at a time (see {@link closeSearchChunks}). */
  closeSearchChunks(): Promise<SearchChunksResult> {
    return closeSearchChunks(this.db);
  }

  /**
   * The run with its messages, tool calls, attempts and member runs, as the
   * HTTP API returns it: one snapshot (a claim or a commit landing between its
   * reads cannot pair one state's status with another's attempts).
   */
  getRunView(runId: string, options: RunViewOptions = {}): Promise<RunView | undefined> {
    return this.db
      .transaction()
      .setIsolationLevel('repeatable read')
      .setAccessMode('read only')
      .execute((trx) => getRunView(trx, runId, options));
  }

  /** A page of run summaries, newest first. */
  listRuns(filter: RunListFilter): Promise<RunListPage> {
    return listRuns(this.db, filter);
  }

  /** A page of the run's messages and their total. */
  listRunMessages(
    runId: string,
    page: { offset: number; limit: number },
  ): Promise<RunMessagesPage> {
    return listRunMessages(this.db, runId, page);
  }

  /** The session and summaries of its top-level runs, oldest first. */
  getSessionView(key: SessionKey): Promise<SessionView | undefined> {
    return getSessionView(this.db, key);
  }

  /** Marks the run for cancellation; throws `RunNotFoundError` or `RunAlreadyTerminalError`. */
  requestCancel(runId: string): Promise<RunRecord> {
    return requestCancel(this.db, runId);
  }

  /** Cancels the run (and its live member runs) by fencing out whoever holds it; undefined when its status or epoch moved on. */
  forceCancel(runId: string, options: ForceCancelOptions = {}): Promise<RunRecord | undefined> {
    return forceCancel(this.db, runId, options);
  }

  /** Appends an event to the run's stream and returns its sequence number (1, 2, ...). */
  appendEvent(runId: string, event: NewRunEvent): Promise<number> {
    return appendEvents(this.db, runId, [event]);
  }

  /** Appends several events of one run in order, in one statement; returns the last `seq`. */
  appendEvents(runId: string, events: readonly NewRunEvent[]): Promise<number> {
    return appendEvents(this.db, runId, events);
  }

  /** The run's events with `seq > afterSeq`, in order. */
  listEvents(runId: string, afterSeq = 0, limit?: number): Promise<StoredEvent[]> {
    return listEvents(this.db, runId, afterSeq, limit);
  }

  /**
   * The run's tree (it and its member runs, nested ones included) and their
   * events after `after` (the last seq read of each run: in the tree's order, or by run id),
   * in two statements; undefined when there is no such run.
   */
  readRunTreeEvents(rootRunId: string, after: RunTreeCursor): Promise<RunTreeEvents | undefined> {
    return readRunTreeEvents(this.db, rootRunId, after);
  }

  /** The fleet at a glance, for every run or one tenant's ({@link readFleetOverview}). */
  readFleetOverview(scope: { tenantId?: string }): Promise<FleetOverview> {
    return readFleetOverview(this.db, scope);
  }

  /**
   * How many runs (member runs included) are in `status` now: for the `cairn_runs_paused` gauge
   * (PAUSED is counted from the partial index `runs_paused_idx`, migration 0033_w).
   */
  async countRunsByStatus(status: RunStatus): Promise<number> {
    const row = await this.db
      .selectFrom('runs')
      .select((eb) => eb.fn.countAll<string>().as('count'))
      .where('status', '=', status)
      .executeTakeFirstOrThrow();
    return Number(row.count);
  }

  /** The run's events of the given types, in order. */
  listEventsOfTypes(runId: string, types: readonly string[]): Promise<StoredEvent[]> {
    return listEventsOfTypes(this.db, runId, types);
  }

  /** Runs in one of `statuses`, not updated for `olderThanMs` (when given), least recently updated first: for a reconciler. */
  async listRunsByStatus(
    statuses: readonly RunStatus[],
    olderThanMs?: number,
    options: { topLevelOnly?: boolean; limit?: number; after?: RunCursor } = {},
  ): Promise<RunRecord[]> {
    if (statuses.length === 0) return [];
    let query = this.db.selectFrom('runs').selectAll().where('status', 'in', statuses);
    // Top-level only reads the partial index runs_top_level_status_updated_idx (status, updated_at).
    if (options.topLevelOnly) query = query.where('parent_run_id', 'is', null);
    if (options.limit !== undefined) query = query.limit(options.limit);
    // Paged by (updated_at to the millisecond, run_id): a cursor holds a JS Date, which has no microseconds.
    const updatedMs = sql<Date>`date_trunc('milliseconds', updated_at)`;
    if (options.after)
      query = query.where(
        sql<boolean>`(${updatedMs}, run_id) > (${options.after.updatedAt}, ${options.after.runId})`,
      );
    if (olderThanMs !== undefined) {
      query = query.where(
        'updated_at',
        '<',
        sql<Date>`now() - make_interval(secs => ${olderThanMs / 1000})`,
      );
    }
    const rows = await query.orderBy(updatedMs).orderBy('run_id').execute();
    return rows.map(toRunRecord);
  }

  /** Every action the run made (decided or not), oldest first: a resume reads its decisions here. */
  listRunActions(runId: string): Promise<PendingActionRecord[]> {
    return listRunActions(this.db, runId);
  }

  /** The undecided actions of the run's tree (a team lists its members'). */
  listPendingActions(runId: string): Promise<PendingActionRecord[]> {
    return listPendingActions(this.db, runId);
  }

  /** Records decisions by compare-and-set, all or nothing (see `decideActions`). */
  decideActions(
    runId: string,
    decisions: readonly PostedDecision[],
    validate: DecisionValidator,
  ): Promise<DecisionsResult> {
    return decideActions(this.db, runId, decisions, validate);
  }

  /** The lifecycle's `suspend` move, in one transaction under the tree root's row lock (see `suspendRun` in `run-suspend.ts`). */
  suspendRun(
    runId: string,
    request: { now: boolean; action(epoch: number, memberPath: string[]): NewPendingAction },
  ): Promise<SuspendOutcome> {
    return suspendRun(this.db, runId, request);
  }

  /** The `suspended` actions of the run's tree, newest first. */
  listSuspendedActions(runId: string): Promise<PendingActionRecord[]> {
    return listSuspendedActions(this.db, runId);
  }

  /** Claims a decided action for execution, fenced by `epoch`; false when it was consumed before. */
  consumeAction(runId: string, epoch: number, actionId: string): Promise<boolean> {
    return consumeAction(this.db, runId, epoch, actionId);
  }

  tenantDaySpend(tenantId: string): Promise<TenantDaySpend> {
    return readTenantDaySpend(this.db, tenantId);
  }

  /** Expires the action if it is still undecided past its `expires_at`. */
  expireAction(actionId: string): Promise<ExpiryOutcome> {
    return expireAction(this.db, actionId);
  }

  /** {@link listOverdueActions}: ids of undecided actions overdue by `graceMs`, oldest first. */
  listOverdueActions(graceMs: number, limit: number): Promise<string[]> {
    return listOverdueActions(this.db, graceMs, limit);
  }

  /** Top-level runs in one of `statuses` whose deadline passed at least `graceMs` ago, earliest first (see `listRunsPastDeadline`). */
  listRunsPastDeadline(
    statuses: readonly RunStatus[],
    graceMs: number,
    limit: number,
  ): Promise<RunPastDeadline[]> {
    return listRunsPastDeadline(this.db, statuses, graceMs, limit);
  }

  /** Ends a run past its deadline, with its live member runs, fenced on its epoch (see `endPastDeadline`). */
  endPastDeadline(runId: string, fence: DeadlineFence): Promise<string[] | undefined> {
    return endPastDeadline(this.db, runId, fence);
  }

  /** The resumes of paused top-level runs with every action decided, paused at least `olderThanMs` ago: resumes never enqueued. */
  listResumablePausedRuns(olderThanMs: number, limit?: number): Promise<TreeResume[]> {
    return listResumablePausedRuns(this.db, olderThanMs, limit);
  }
}
