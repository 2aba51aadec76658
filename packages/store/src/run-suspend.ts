import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import { RunNotFoundError, type PendingActionRecord } from '@cairn/engine';
import type { NewPendingAction } from '@cairn/engine';
import {
  assertNever,
  runEntityPath,
  suspendedEventData,
  suspendMoveOf,
  RUN_TRANSITIONS,
  type SuspendOutcome,
} from '@cairn/engine/store';
import { RunAlreadyTerminalError } from './errors.js';
import { insertPendingActions, rootRunOf, toPendingActionRecord } from './pending-actions.js';
import { appendEvents } from './run-events.js';
import { RUN_RECORD_COLUMNS, toRunRecord } from './run-row.js';
import type { Database } from './schema.js';

/**
 * The store's half of the lifecycle's `suspend` move, in one transaction under
 * the tree root's row lock (the lock a claim and a decision take too): a
 * `suspended` action waiting in the tree already makes it `already`; otherwise
 * the lifecycle's `suspendMoveOf` picks the move. `at-once` inserts
 * the action on the run with `RunSuspended` and, when no execution holds the
 * tree (its root queued or paused), moves the root to PAUSED with its epoch + 1
 * (a job or resume queued before is refused by the claim); `at-boundary`
 * records the request on the root, for the execution's lease watch and for the
 * next claim. Throws `RunNotFoundError`, or `RunAlreadyTerminalError` for a finished run.
 */
export async function suspendRun(
  db: Kysely<Database>,
  runId: string,
  request: { now: boolean; action(epoch: number, memberPath: string[]): NewPendingAction },
): Promise<SuspendOutcome> {
  return db.transaction().execute(async (trx) => {
    const rootRunId = await rootRunOf(trx, runId);
    const root = await trx
      .selectFrom('runs')
      .select(['status', 'epoch'])
      .where('run_id', '=', rootRunId)
      .forUpdate()
      .executeTakeFirstOrThrow();
    const row = await trx
      .selectFrom('runs')
      .select(RUN_RECORD_COLUMNS)
      .where('run_id', '=', runId)
      .executeTakeFirst();
    if (!row) throw new RunNotFoundError(runId);
    const run = toRunRecord(row);
    const waiting = await trx
      .selectFrom('pending_actions')
      .select('action_id')
      .where('root_run_id', '=', rootRunId)
      .where('kind', '=', 'suspended')
      .where('status', '=', 'pending')
      .executeTakeFirst();
    if (waiting) return { kind: 'already', run, actionId: waiting.action_id };
    // `idle`: no execution holds the tree, its root (queued or paused) moves on, so nothing queued before claims it.
    const { move, idle } = suspendMoveOf(run.status, root.status);
    switch (move) {
      case 'refused':
        throw new RunAlreadyTerminalError(runId, run.status);
      case 'at-boundary': {
        await trx
          .updateTable('runs')
          .set({ suspend_request: JSON.stringify({ runId, now: request.now }) })
          .where('run_id', '=', rootRunId)
          .execute();
        return { kind: 'requested', run };
      }
      case 'at-once':
        break;
      default:
        return assertNever(move);
    }
    const epoch = idle ? root.epoch + 1 : root.epoch;
    const action = request.action(epoch, runEntityPath(run.entity.name, undefined));
    if (idle) {
      await trx
        .updateTable('runs')
        .set({
          status: RUN_TRANSITIONS.suspend.to,
          epoch: sql`epoch + 1`,
          suspend_request: null,
          waiting: null,
          updated_at: sql`now()`,
        })
        .where('run_id', '=', rootRunId)
        .where('status', 'in', RUN_TRANSITIONS.suspend.from)
        .execute();
    }
    await insertPendingActions(trx, runId, [action]);
    await appendEvents(trx, runId, [{ type: 'RunSuspended', data: suspendedEventData(action) }]);
    const after = await trx
      .selectFrom('runs')
      .select(RUN_RECORD_COLUMNS)
      .where('run_id', '=', runId)
      .executeTakeFirstOrThrow();
    return {
      kind: 'suspended',
      run: toRunRecord(after),
      actionId: action.actionId,
      removeJob: root.status === 'PENDING',
    };
  });
}

/** The `suspended` actions of `runId`'s tree, newest first, whatever their status; throws `RunNotFoundError`. */
export async function listSuspendedActions(
  db: Kysely<Database>,
  runId: string,
): Promise<PendingActionRecord[]> {
  const rootRunId = await rootRunOf(db, runId);
  const rows = await db
    .selectFrom('pending_actions')
    .selectAll()
    .where('root_run_id', '=', rootRunId)
    .where('kind', '=', 'suspended')
    .orderBy('created_at', 'desc')
    .orderBy('action_id', 'desc')
    .execute();
  return rows.map(toPendingActionRecord);
}
