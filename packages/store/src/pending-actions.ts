import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import {
  ActionNotFoundError,
  DecisionConflictError,
  LeaseLostError,
  RunNotFoundError,
} from '@cairn/engine';
import type {
  DecisionsResult,
  NewPendingAction,
  PendingActionRecord,
  PostedDecision,
  RunStatus,
} from '@cairn/engine';
import {
  expiryMoveOf,
  judgeDecision,
  budgetApproval,
  normalizeDecision,
  resumeWhenDecided,
} from '@cairn/engine/store';
import {
  type DecisionValidator,
  type ExpiryOutcome,
  type TreeResume,
  assertNever,
  EXECUTING_STATUS,
  RUN_TRANSITIONS,
} from '@cairn/engine/store';
import { appendEvents } from './run-events.js';
import type { Database, PendingActionRow } from './schema.js';
import { withRunTree } from './run-tree.js';

/** Maps a `pending_actions` row to the engine's record. */
export function toPendingActionRecord(row: PendingActionRow): PendingActionRecord {
  return {
    actionId: row.action_id,
    kind: row.kind,
    runId: row.run_id,
    rootRunId: row.root_run_id,
    memberPath: row.member_path,
    toolCallId: row.tool_call_id,
    tool: row.tool,
    args: row.args,
    argsDigest: row.args_digest,
    argsSchema: row.args_schema,
    batch: row.batch,
    status: row.status,
    decision: row.decision,
    onTimeout: row.on_timeout,
    expiresAt: row.expires_at,
    decidedAt: row.decided_at,
    consumedAt: row.consumed_at,
    consumedEpoch: row.consumed_epoch,
    createdAt: row.created_at,
  };
}

/** The top-level run of `runId`'s tree (itself for a top-level run); throws `RunNotFoundError`. */
export async function rootRunOf(db: Kysely<Database>, runId: string): Promise<string> {
  const { rows } = await sql<{ run_id: string }>`
    with recursive up(run_id, parent_run_id, depth) as (
      select run_id, parent_run_id, 0 from runs where run_id = ${runId}
      union all
      select r.run_id, r.parent_run_id, up.depth + 1 from runs r join up on r.run_id = up.parent_run_id
    )
    select run_id from up where parent_run_id is null`.execute(db);
  const root = rows[0];
  if (!root) throw new RunNotFoundError(runId);
  return root.run_id;
}

/** Inserts the pending actions a pause of `runId` makes; call inside the fenced finish. */
export async function insertPendingActions(
  db: Kysely<Database>,
  runId: string,
  actions: readonly NewPendingAction[],
): Promise<void> {
  if (actions.length === 0) return;
  const rootRunId = await rootRunOf(db, runId);
  await db
    .insertInto('pending_actions')
    .values(
      actions.map((a) => ({
        action_id: a.actionId,
        kind: a.kind,
        run_id: runId,
        root_run_id: rootRunId,
        member_path: JSON.stringify(a.memberPath),
        tool_call_id: a.toolCallId,
        tool: a.tool,
        args: JSON.stringify(a.args ?? null),
        args_digest: a.argsDigest,
        args_schema: a.argsSchema === null ? null : JSON.stringify(a.argsSchema),
        batch: a.batch,
        on_timeout: a.onTimeout,
        expires_at: a.expiresAt,
      })),
    )
    .execute();
  // The suspend request this pause answers is done with: its resume must not stop the run again.
  if (actions.some((a) => a.kind === 'suspended'))
    await db
      .updateTable('runs')
      .set({ suspend_request: null })
      .where('run_id', '=', rootRunId)
      .where(sql<string>`suspend_request ->> 'runId'`, '=', runId)
      .execute();
}

/** Every action `runId` made, oldest first: what a resume of the run reads its decisions from. */
export async function listRunActions(
  db: Kysely<Database>,
  runId: string,
): Promise<PendingActionRecord[]> {
  const rows = await db
    .selectFrom('pending_actions')
    .selectAll()
    .where('run_id', '=', runId)
    .orderBy('batch')
    .orderBy('created_at')
    .orderBy('action_id')
    .execute();
  return rows.map(toPendingActionRecord);
}

/** The undecided actions of `runId`'s whole tree (a team lists its members'), oldest first. */
export async function listPendingActions(
  db: Kysely<Database>,
  runId: string,
): Promise<PendingActionRecord[]> {
  const rootRunId = await rootRunOf(db, runId);
  const rows = await db
    .selectFrom('pending_actions')
    .selectAll()
    .where('root_run_id', '=', rootRunId)
    .where('status', '=', 'pending')
    .orderBy('created_at')
    .orderBy('action_id')
    .execute();
  return rows.map(toPendingActionRecord);
}

/**
 * Records decisions for actions of `runId`'s tree in one transaction, all or
 * nothing: each judged by the lifecycle's `judgeDecision` under the rows'
 * locks, then by compare-and-set on `status = 'pending'`, so a decision is
 * never replaced; the same decision again is listed in `alreadyDecided`.
 * Throws (recording none) `ActionNotFoundError` (404),
 * `DecisionConflictError` (409: another decision recorded, or the action's
 * run is no longer PAUSED), `ActionExpiredError` (410),
 * `ArgsDigestMismatchError` (412), or whatever `validate` throws (422).
 * Appends `ActionDecided` to each decided action's run in the same transaction.
 * `resume` is set when the lifecycle's `resumeWhenDecided` resumes the tree
 * (this call decided its last pending action).
 */
export async function decideActions(
  db: Kysely<Database>,
  runId: string,
  decisions: readonly PostedDecision[],
  validate: DecisionValidator,
): Promise<DecisionsResult> {
  return db.transaction().execute(async (trx) => {
    const rootRunId = await rootRunOf(trx, runId);
    const root = await trx
      .selectFrom('runs')
      .select(['status', 'epoch', 'budget', 'tenant_id', 'priority'])
      .where('run_id', '=', rootRunId)
      .forUpdate()
      .executeTakeFirstOrThrow();
    const ids = [...new Set(decisions.map((d) => d.actionId))];
    const rows =
      ids.length === 0
        ? []
        : await trx
            .selectFrom('pending_actions as a')
            .innerJoin('runs as r', 'r.run_id', 'a.run_id')
            .selectAll('a')
            .select([
              'r.status as run_status',
              sql<boolean>`a.expires_at is not null and a.expires_at <= now()`.as('past_expiry'),
            ])
            .where('a.root_run_id', '=', rootRunId)
            .where('a.action_id', 'in', ids)
            .forUpdate()
            .execute();
    const byId = new Map(
      rows.map((row) => [row.action_id, { row, action: toPendingActionRecord(row) }]),
    );
    const applied: string[] = [];
    const alreadyDecided: string[] = [];
    const events = new Map<string, { type: string; data: unknown }[]>();
    for (const posted of decisions) {
      const found = byId.get(posted.actionId);
      if (!found) throw new ActionNotFoundError(posted.actionId, runId);
      const { row, action } = found;
      if (
        judgeDecision(action, posted, {
          runStatus: row.run_status,
          pastExpiry: row.past_expiry,
        }) === 'already-decided'
      ) {
        if (!alreadyDecided.includes(action.actionId) && !applied.includes(action.actionId))
          alreadyDecided.push(action.actionId);
        continue;
      }
      validate(action, posted.decision);
      const updated = await trx
        .updateTable('pending_actions')
        .set({
          status: 'decided',
          decision: JSON.stringify(normalizeDecision(posted.decision)),
          decided_at: sql`now()`,
        })
        .where('action_id', '=', action.actionId)
        .where('status', '=', 'pending')
        .returningAll()
        .executeTakeFirst();
      if (!updated)
        throw new DecisionConflictError(
          action.actionId,
          `action ${action.actionId} was decided concurrently`,
        );
      found.action = toPendingActionRecord(updated);
      applied.push(action.actionId);
      // A resumed suspension grants the run a fresh allowance of attempts (counted from now on).
      if (action.kind === 'suspended')
        await trx
          .updateTable('runs')
          .set({ attempts_reset_at: sql`now()` })
          .where('run_id', '=', action.runId)
          .execute();
      // An approved budget action raises the budget of the tree (its root's), or lets the tree go
      // on past its tenant's spent day for the rest of that day (recorded on its root).
      if (action.kind === 'budget' && posted.decision.type === 'approve') {
        const approval = budgetApproval(action, root.budget, posted.decision.budget);
        if (approval.kind === 'raise') root.budget = approval.budget;
        await trx
          .updateTable('runs')
          .set(
            approval.kind === 'raise'
              ? { budget: JSON.stringify(approval.budget) }
              : { tenant_budget_exempt_day: approval.day },
          )
          .where('run_id', '=', rootRunId)
          .execute();
      }
      const decided = {
        type: 'ActionDecided',
        data: {
          action_id: action.actionId,
          type: posted.decision.type,
          member_path: action.memberPath,
        },
      };
      for (const streamRunId of eventStreamsOf(action))
        events.set(streamRunId, [...(events.get(streamRunId) ?? []), decided]);
    }
    for (const [eventRunId, runEvents] of events) await appendEvents(trx, eventRunId, runEvents);
    const pending = await countPending(trx, rootRunId);
    const status = rootRunId === runId ? root.status : await statusOf(trx, runId);
    const resume = resumeWhenDecided({
      rootRunId,
      rootStatus: root.status,
      rootEpoch: root.epoch,
      rootTenantId: root.tenant_id,
      rootPriority: root.priority,
      pending,
      decidedNow: applied.length > 0,
    });
    if (resume) await markResumable(trx, rootRunId);
    return { applied, alreadyDecided, pending, status, ...(resume && { resume }) };
  });
}

/**
 * Claims a decided action (by a person, or by its expiry: status `expired`,
 * decided as rejected) for execution in one fenced statement: sets
 * `consumed_at` only if no execution consumed it before and `epoch` still
 * holds its run (RUNNING). Returns false when it was consumed already (the
 * call must not run again); throws `LeaseLostError` when the run moved on.
 */
export async function consumeAction(
  db: Kysely<Database>,
  runId: string,
  epoch: number,
  actionId: string,
): Promise<boolean> {
  const { rows } = await sql<{ consumed: boolean; held: boolean }>`
    with held as (
      select 1 from runs where run_id = ${runId} and epoch = ${epoch} and status = ${sql.lit(EXECUTING_STATUS)}
    ),
    consumed as (
      update pending_actions
         set consumed_at = now(), consumed_epoch = ${epoch}
       where action_id = ${actionId} and run_id = ${runId} and consumed_at is null
         and status in ('decided', 'expired') and exists (select 1 from held)
      returning action_id
    )
    select exists (select 1 from consumed) as consumed, exists (select 1 from held) as held`.execute(
    db,
  );
  const row = rows[0];
  if (!row?.held) throw new LeaseLostError(runId, epoch);
  return row.consumed;
}

/**
 * Expires an undecided action whose `expires_at` has passed, in one
 * transaction, as the lifecycle's `expiryMoveOf` says (with `ActionExpired`,
 * and `RunError` for `onTimeout: 'error'`); a rejection that decided the
 * tree's last action sets `resume` when the lifecycle's `resumeWhenDecided` resumes it.
 */
export async function expireAction(db: Kysely<Database>, actionId: string): Promise<ExpiryOutcome> {
  return db.transaction().execute(async (trx) => {
    const head = await trx
      .selectFrom('pending_actions')
      .select('root_run_id')
      .where('action_id', '=', actionId)
      .executeTakeFirst();
    if (!head) return { kind: 'unchanged' };
    const root = await trx
      .selectFrom('runs')
      .select(['status', 'epoch', 'tenant_id', 'priority'])
      .where('run_id', '=', head.root_run_id)
      .forUpdate()
      .executeTakeFirstOrThrow();
    const row = await trx
      .selectFrom('pending_actions')
      .selectAll()
      .where('action_id', '=', actionId)
      .where('status', '=', 'pending')
      .where('expires_at', '<=', sql<Date>`now()`)
      .forUpdate()
      .executeTakeFirst();
    if (!row) return { kind: 'unchanged' };
    const expired = { action_id: actionId, member_path: row.member_path };
    const move = expiryMoveOf(toPendingActionRecord(row));
    switch (move.kind) {
      case 'reject': {
        await trx
          .updateTable('pending_actions')
          .set({
            status: 'expired',
            decision: JSON.stringify(move.decision),
            decided_at: sql`now()`,
          })
          .where('action_id', '=', actionId)
          .execute();
        for (const streamRunId of eventStreamsOf(toPendingActionRecord(row)))
          await appendEvents(trx, streamRunId, [{ type: 'ActionExpired', data: expired }]);
        const pending = await countPending(trx, row.root_run_id);
        const resume = resumeWhenDecided({
          rootRunId: row.root_run_id,
          rootStatus: root.status,
          rootEpoch: root.epoch,
          rootTenantId: root.tenant_id,
          rootPriority: root.priority,
          pending,
          decidedNow: true,
        });
        if (resume) await markResumable(trx, row.root_run_id);
        return { kind: 'rejected', ...(resume && { resume }) };
      }
      case 'error': {
        await trx
          .updateTable('pending_actions')
          .set({ status: 'expired' })
          .where('action_id', '=', actionId)
          .execute();
        await trx
          .updateTable('pending_actions')
          .set({ status: 'cancelled' })
          .where('root_run_id', '=', row.root_run_id)
          .where('status', '=', 'pending')
          .execute();
        const { error, transition } = move;
        const errored = await trx
          .updateTable('runs')
          .set({
            status: transition.to,
            epoch: sql`epoch + 1`,
            error: JSON.stringify({ name: error.name, message: error.message, retryable: false }),
            updated_at: sql`now()`,
          })
          .where((eb) =>
            eb.or([
              eb('run_id', '=', row.root_run_id),
              eb('run_id', 'in', treeOf(trx, row.root_run_id)),
            ]),
          )
          .where('status', 'in', transition.from)
          .returning('run_id')
          .execute();
        for (const streamRunId of eventStreamsOf(toPendingActionRecord(row)))
          await appendEvents(trx, streamRunId, [{ type: 'ActionExpired', data: expired }]);
        for (const { run_id } of errored) {
          await appendEvents(trx, run_id, [
            { type: 'RunError', data: { error: { name: error.name, message: error.message } } },
          ]);
        }
        return { kind: 'errored', runIds: errored.map((r) => r.run_id) };
      }
      default:
        return assertNever(move);
    }
  });
}

/**
 * Stamps a paused root run whose last action was just decided (`updated_at`):
 * its resume became runnable now, a change of the run, so a version grace
 * period (see `awaitDeploy`) starts with its resume's first pickup, whatever
 * a worker left before the decision.
 */
async function markResumable(trx: Kysely<Database>, rootRunId: string): Promise<void> {
  await trx
    .updateTable('runs')
    .set({ updated_at: sql`now()` })
    .where('run_id', '=', rootRunId)
    .where('status', 'in', RUN_TRANSITIONS.resumeFromPause.from)
    .execute();
}

/** Run ids below `rootRunId` (not itself), as a subquery. */
function treeOf(db: Kysely<Database>, rootRunId: string) {
  return withRunTree(db, rootRunId).selectFrom('tree').select('tree.run_id');
}

/**
 * The resumes of paused top-level runs none of whose actions is undecided,
 * paused for at least `olderThanMs`: their resume was never enqueued (or was
 * lost), for the reconciler.
 */
export async function listResumablePausedRuns(
  db: Kysely<Database>,
  olderThanMs: number,
  limit?: number,
): Promise<TreeResume[]> {
  let query = db
    .selectFrom('runs')
    .select(['run_id', 'epoch', 'tenant_id', 'priority'])
    .where('status', 'in', RUN_TRANSITIONS.resumeFromPause.from)
    .where('parent_run_id', 'is', null)
    .where('updated_at', '<', sql<Date>`now() - make_interval(secs => ${olderThanMs / 1000})`)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('pending_actions as a')
            .select(sql`1`.as('one'))
            .whereRef('a.root_run_id', '=', 'runs.run_id')
            .where('a.status', '=', 'pending'),
        ),
      ),
    )
    .orderBy('updated_at');
  if (limit !== undefined) query = query.limit(limit);
  const rows = await query.execute();
  return rows.map((r) => ({
    rootRunId: r.run_id,
    pausedEpoch: r.epoch,
    tenantId: r.tenant_id,
    priority: r.priority,
  }));
}

/**
 * Undecided actions whose `expires_at` passed at least `graceMs` ago: their
 * delayed `expire` job never ran (the worker died before enqueuing it, the
 * queue lost it, or it fired early on a clock ahead of Postgres's), for the
 * reconciler. Oldest first, read through the partial index on undecided actions.
 */
export async function listOverdueActions(
  db: Kysely<Database>,
  graceMs: number,
  limit: number,
): Promise<string[]> {
  const rows = await db
    .selectFrom('pending_actions')
    .select('action_id')
    .where('status', '=', 'pending')
    .where('expires_at', '<', sql<Date>`now() - make_interval(secs => ${graceMs / 1000})`)
    .orderBy('expires_at')
    .limit(limit)
    .execute();
  return rows.map((r) => r.action_id);
}

/**
 * The events of a member's action that {@link eventStreamsOf} also stores in
 * the root run's stream: a root's merged stream shows the root's copy alone.
 */
export const ROOT_COPIED_ACTION_EVENTS = ['ActionDecided', 'ActionExpired'] as const;

/** The streams an action's events go to: its run's, and its root run's when that is another (a team follows its member's decisions). */
function eventStreamsOf(action: PendingActionRecord): string[] {
  return action.runId === action.rootRunId ? [action.runId] : [action.runId, action.rootRunId];
}

/** Undecided actions left in a tree. */
export async function countPending(db: Kysely<Database>, rootRunId: string): Promise<number> {
  const row = await db
    .selectFrom('pending_actions')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('root_run_id', '=', rootRunId)
    .where('status', '=', 'pending')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Marks the undecided actions of these runs `cancelled`; call inside the cancel's transaction. */
export async function cancelPendingActions(
  db: Kysely<Database>,
  runIds: readonly string[],
): Promise<void> {
  if (runIds.length === 0) return;
  await db
    .updateTable('pending_actions')
    .set({ status: 'cancelled' })
    .where('run_id', 'in', runIds)
    .where('status', '=', 'pending')
    .execute();
}

async function statusOf(db: Kysely<Database>, runId: string): Promise<RunStatus> {
  const row = await db
    .selectFrom('runs')
    .select('status')
    .where('run_id', '=', runId)
    .executeTakeFirst();
  if (!row) throw new RunNotFoundError(runId);
  return row.status;
}
