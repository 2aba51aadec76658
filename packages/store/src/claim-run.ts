import { sql } from 'kysely';
import type { Expression, ExpressionBuilder, Kysely, SqlBool } from 'kysely';
import { RunNotContinuableError, RunNotFoundError, type RunStatus } from '@cairn/engine';
import {
  type Claim,
  type ClaimRequest,
  assertNever,
  CLAIM_CONDITION_BY_STATUS,
  CLAIM_CONDITIONS,
  CLAIMABLE_STATUSES,
  type ClaimCondition,
  RUN_TRANSITIONS,
} from '@cairn/engine/store';
import {
  attemptsSinceProgress,
  budgetedTreeUsage,
  waitingContinueRequest,
} from './claim-progress.js';
import { assertParentHeld } from './parent-fence.js';
import { RUN_RECORD_COLUMNS, toRunRecord } from './run-row.js';
import type { Database } from './schema.js';
import { usageOfStored } from './usage-column.js';

/**
 * The statuses `from` lets a claim start from, each with the condition the
 * lifecycle attaches to it ({@link CLAIM_CONDITION_BY_STATUS}): a paused run
 * only once nothing in its tree waits for a person.
 */
function claimableFrom(runId: string, from: readonly RunStatus[]) {
  return (eb: ExpressionBuilder<Database, 'runs'>) => {
    const allowed: Expression<SqlBool>[] = [];
    for (const condition of CLAIM_CONDITIONS) {
      const statuses = from.filter((status) => CLAIM_CONDITION_BY_STATUS[status] === condition);
      if (statuses.length > 0) allowed.push(claimConditionOn(eb, runId, condition, statuses));
    }
    return eb.or(allowed);
  };
}

/** `status in statuses` and what `condition` adds to it, as SQL. */
function claimConditionOn(
  eb: ExpressionBuilder<Database, 'runs'>,
  runId: string,
  condition: ClaimCondition,
  statuses: readonly RunStatus[],
): Expression<SqlBool> {
  switch (condition) {
    case 'status-only':
      return eb('status', 'in', statuses);
    case 'tree-decided':
      return eb.and([
        eb('status', 'in', statuses),
        eb.not(
          eb.exists(
            eb
              .selectFrom('pending_actions as a')
              .select(sql`1`.as('one'))
              .where('a.status', '=', 'pending')
              .where((w) => w.or([w('a.run_id', '=', runId), w('a.root_run_id', '=', runId)])),
          ),
        ),
      ]);
    default:
      return assertNever(condition);
  }
}

/**
 * Claims a run in ONE statement (its own transaction unless `db` is one): the
 * conditional UPDATE increments the epoch and sets RUNNING (and the definition
 * hash the execution runs on, when given), and in the same
 * statement the open attempt is superseded and this claim's attempt
 * inserted, both only when the UPDATE claimed the run. A member run claimed
 * with `parentEpoch` first share-locks its team's row in the same
 * transaction (`LeaseLostError` once the team was claimed since) and takes
 * its team's deadline (`teamRunId`, set by that recursion). Throws
 * `RunNotFoundError` or `RunNotContinuableError` when nothing was claimed.
 */
export async function claimRun(
  db: Kysely<Database>,
  runId: string,
  claim: ClaimRequest,
  teamRunId?: string,
): Promise<Claim> {
  if (claim.parentEpoch !== undefined) {
    const parentEpoch = claim.parentEpoch;
    return db.transaction().execute(async (trx) => {
      const child = await trx
        .selectFrom('runs')
        .select('parent_run_id')
        .where('run_id', '=', runId)
        .executeTakeFirst();
      if (!child?.parent_run_id) return claimRun(trx, runId, { ...claim, parentEpoch: undefined });
      await assertParentHeld(trx, child.parent_run_id, parentEpoch);
      return claimRun(trx, runId, { ...claim, parentEpoch: undefined }, child.parent_run_id);
    });
  }
  const from = claim.from ?? CLAIMABLE_STATUSES;
  const row = await db
    .with('run', (qb) =>
      qb
        .updateTable('runs')
        .set({
          epoch: sql`epoch + 1`,
          status: RUN_TRANSITIONS.claim.to,
          updated_at: sql`now()`,
          waiting: null,
          ...(claim.definitionHash !== undefined && { definition_hash: claim.definitionHash }),
          // A member run's deadline is its team's, as it is now (a continue may have moved it).
          ...(teamRunId !== undefined && {
            deadline_at: sql<Date | null>`(select p.deadline_at from runs p where p.run_id = ${teamRunId})`,
          }),
        })
        .where('run_id', '=', runId)
        .where(claimableFrom(runId, from))
        .returning(RUN_RECORD_COLUMNS),
    )
    .with('superseded', (qb) =>
      qb
        .updateTable('run_attempts')
        .set({ ended_at: sql`now()`, outcome: 'superseded' })
        .where('run_id', '=', runId)
        .where('ended_at', 'is', null)
        .where((eb) => eb.exists(eb.selectFrom('run').select('run.run_id'))),
    )
    .with('attempt', (qb) =>
      qb
        .insertInto('run_attempts')
        .columns(['run_id', 'epoch', 'worker_id', 'reason'])
        .expression((eb) =>
          eb
            .selectFrom('run')
            .select([
              'run.run_id',
              'run.epoch',
              eb.val(claim.workerId).as('worker_id'),
              eb.val(claim.reason).as('reason'),
            ]),
        ),
    )
    .selectFrom('run')
    .select(RUN_RECORD_COLUMNS)
    .select([
      attemptsSinceProgress(runId).as('attempts_since_progress'),
      waitingContinueRequest().as('continue_request'),
      budgetedTreeUsage(runId).as('tree_usage'),
    ])
    .executeTakeFirst();
  if (!row) {
    const current = await db
      .selectFrom('runs')
      .select('status')
      .where('run_id', '=', runId)
      .executeTakeFirst();
    if (!current) throw new RunNotFoundError(runId);
    throw new RunNotContinuableError(
      runId,
      current.status,
      `only ${from.join(', ')} runs can be claimed here`,
    );
  }
  const request = row.continue_request;
  return {
    epoch: row.epoch,
    run: toRunRecord(row),
    // The attempt this statement inserts is not visible to it: count it here.
    claimsSinceProgress: row.attempts_since_progress + 1,
    treeUsage: row.tree_usage?.map(usageOfStored) ?? null,
    continueRequest: request && {
      requestId: request.request_id,
      input: request.input,
      upgrade: request.upgrade,
      requestedAt: new Date(request.requested_at),
    },
  };
}
