import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import { FINISH_EVENT_TYPE, type RunErrorInfo, type RunStatus } from '@cairn/engine';
import { RUN_TRANSITIONS, type RunPastDeadline } from '@cairn/engine/store';
import { closeRunningToolCalls } from './close-tool-calls.js';
import { cancelPendingActions } from './pending-actions.js';
import { appendEvents } from './run-events.js';
import type { Database } from './schema.js';
import { withRunTree } from './run-tree.js';

/**
 * Moves the run's deadline to `deadlineMs` from now, in one statement that
 * checks its status; false when the run is in none of `statuses` (or is gone).
 */
export async function moveDeadline(
  db: Kysely<Database>,
  runId: string,
  deadlineMs: number,
  statuses: readonly RunStatus[],
): Promise<boolean> {
  if (statuses.length === 0) return false;
  const row = await db
    .updateTable('runs')
    .set({
      deadline_at: sql<Date>`now() + ${deadlineMs}::double precision * interval '1 millisecond'`,
      updated_at: sql<Date>`now()`,
    })
    .where('run_id', '=', runId)
    .where('status', 'in', statuses)
    .returning('run_id')
    .executeTakeFirst();
  return row !== undefined;
}

/** What {@link endPastDeadline} is fenced on, and the error each run it ends gets. */
export interface DeadlineFence {
  epoch: number;
  statuses: readonly RunStatus[];
  errorOf(run: { runId: string; deadlineAt: Date }): RunErrorInfo;
}

/**
 * Top-level runs in one of `statuses` whose deadline passed at least `graceMs`
 * ago (by the store's clock), earliest first, at most `limit`: read through
 * the partial index `runs_deadline_idx`.
 */
export async function listRunsPastDeadline(
  db: Kysely<Database>,
  statuses: readonly RunStatus[],
  graceMs: number,
  limit: number,
): Promise<RunPastDeadline[]> {
  if (statuses.length === 0) return [];
  const rows = await db
    .selectFrom('runs')
    .select(['run_id', 'epoch', 'deadline_at'])
    .where(
      'deadline_at',
      '<',
      sql<Date>`now() - ${graceMs}::double precision * interval '1 millisecond'`,
    )
    .where('parent_run_id', 'is', null)
    .where('status', 'in', statuses)
    .orderBy('deadline_at')
    .limit(limit)
    .execute();
  return rows.map((r) => ({ runId: r.run_id, epoch: r.epoch, deadlineAt: r.deadline_at! }));
}

/**
 * Ends a run past its deadline that no execution ended, in one transaction:
 * the run (only while it is in one of `fence.statuses` with `fence.epoch`)
 * and its member runs still in those statuses go to ERROR with their
 * `fence.errorOf`, epoch + 1 (whoever still executes one loses its next
 * write), waiting for nothing; their open attempts end (`error`), their
 * `running` tool rows are closed, their undecided actions are cancelled
 * (a PAUSED tree's), and each stores a `RunError`, so its event
 * stream ends. A continue request waiting on the run stays for the next
 * continue. Returns the ended run ids (the run first), or undefined when the
 * run's status or epoch moved on.
 */
export async function endPastDeadline(
  db: Kysely<Database>,
  runId: string,
  fence: DeadlineFence,
): Promise<string[] | undefined> {
  const { statuses } = fence;
  if (statuses.length === 0) return undefined;
  return db.transaction().execute(async (trx) => {
    const root = await trx
      .selectFrom('runs')
      .select(['run_id', 'deadline_at'])
      .where('run_id', '=', runId)
      .where('epoch', '=', fence.epoch)
      .where('status', 'in', statuses)
      .where('deadline_at', 'is not', null)
      .forUpdate()
      .executeTakeFirst();
    if (!root) return undefined;
    const members = await withRunTree(trx, runId)
      .selectFrom('runs')
      .select(['runs.run_id', 'runs.deadline_at'])
      .where('runs.run_id', 'in', (eb) => eb.selectFrom('tree').select('tree.run_id'))
      .where('runs.status', 'in', statuses)
      .orderBy('runs.created_at')
      .forUpdate()
      .execute();
    const ended: string[] = [];
    for (const run of [root, ...members]) {
      // A member run's deadline is its team's.
      const deadlineAt = run.deadline_at ?? root.deadline_at!;
      const error = fence.errorOf({ runId: run.run_id, deadlineAt });
      const row = await trx
        .updateTable('runs')
        .set({
          status: RUN_TRANSITIONS.deadline.to,
          epoch: sql<number>`epoch + 1`,
          error: JSON.stringify(error),
          waiting: null,
          updated_at: sql<Date>`now()`,
        })
        .where('run_id', '=', run.run_id)
        .returning(['run_id', 'epoch'])
        .executeTakeFirstOrThrow();
      await appendEvents(trx, row.run_id, [
        {
          type: FINISH_EVENT_TYPE.ERROR,
          data: { error, epoch: row.epoch, at: new Date().toISOString() },
        },
      ]);
      ended.push(row.run_id);
    }
    await closeRunningToolCalls(trx, ended, RUN_TRANSITIONS.deadline.to);
    // A PAUSED run waited on people who did not decide in time: nobody may decide them now.
    await cancelPendingActions(trx, ended);
    await trx
      .updateTable('run_attempts')
      .set({ ended_at: sql`now()`, outcome: 'error' })
      .where('run_id', 'in', ended)
      .where('ended_at', 'is', null)
      .execute();
    return ended;
  });
}
