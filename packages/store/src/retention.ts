import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import { FINAL_STATUSES } from '@cairn/engine';
import { ADVISORY_LOCKS, withAdvisoryLock } from './advisory-lock.js';
import type { Database } from './schema.js';
import { pruneWebhookHistory } from './webhooks/prune-webhook-history.js';

/** Default `CAIRN_RETAIN_DAYS`: finished runs are kept this many days. */
export const DEFAULT_RETAIN_DAYS = 30;

/** Default number of top-level runs (with their member runs) deleted per transaction. */
const DEFAULT_PRUNE_BATCH = 500;

/** Options of {@link pruneFinishedRuns}. */
export interface PruneOptions {
  /** Finished runs last updated before this instant are deleted. */
  olderThan: Date;
  /** Top-level runs per batch (each batch is one short transaction). @defaultValue {@link DEFAULT_PRUNE_BATCH} */
  batchSize?: number;
  /** Stop after this many batches (the next pass goes on). @defaultValue unbounded */
  maxBatches?: number;
}

/** What a prune did; `locked: false` when another worker was pruning (this one did nothing). */
export interface PruneResult {
  locked: boolean;
  /** Runs deleted, member runs included. */
  runs: number;
  /** Sessions deleted because no run was left in them. */
  sessions: number;
  batches: number;
}

/**
 * Deletes finished runs (COMPLETED, ERROR, CANCELLED) last updated before `olderThan`, with their
 * messages, tool calls, attempts, events and pending actions (by cascade) and their member runs, in
 * small batches, then the sessions left empty, then the webhook events dispatched and the delivery
 * attempts recorded before `olderThan`. A team is deleted only when every run of its tree is
 * finished. One worker at a time (a Postgres advisory lock); rows are taken with `SKIP LOCKED`, and no
 * unfinished run is read for update, so checkpoints never wait for a prune.
 *
 * @example
 * await pruneFinishedRuns(db, { olderThan: new Date(Date.now() - 30 * 86_400_000) });
 */
export async function pruneFinishedRuns(
  db: Kysely<Database>,
  options: PruneOptions,
): Promise<PruneResult> {
  const batchSize = options.batchSize ?? DEFAULT_PRUNE_BATCH;
  const outcome = await withAdvisoryLock(db, ADVISORY_LOCKS.retention, async (connection) => {
    const done: PruneResult = { locked: true, runs: 0, sessions: 0, batches: 0 };
    while (options.maxBatches === undefined || done.batches < options.maxBatches) {
      const deleted = await deleteBatch(connection, options.olderThan, batchSize);
      if (deleted.runs === 0) break;
      done.batches += 1;
      done.runs += deleted.runs;
      done.sessions += deleted.sessions;
    }
    await pruneWebhookHistory(connection, options.olderThan, batchSize);
    return done;
  });
  return outcome.locked ? outcome.result : { locked: false, runs: 0, sessions: 0, batches: 0 };
}

/** One batch in one transaction: up to `batchSize` finished top-level runs whose whole tree is finished. */
async function deleteBatch(
  db: Kysely<Database>,
  olderThan: Date,
  batchSize: number,
): Promise<{ runs: number; sessions: number }> {
  const finals = sql.join(FINAL_STATUSES.map((s) => sql.lit(s)));
  return db.transaction().execute(async (trx) => {
    const { rows } = await sql<{ runs: number; sessions: SessionRef[] | null }>`
      with recursive candidates as (
        select run_id from runs
        where parent_run_id is null and status in (${finals}) and updated_at < ${olderThan}
          and not exists (
            select 1 from runs m where m.parent_run_id = runs.run_id and m.status not in (${finals})
          )
          -- A fork reads its history through its source: the source goes once its forks have.
          and not exists (select 1 from runs f where f.shared_history_run_id = runs.run_id)
        order by updated_at
        limit ${batchSize}
        for update skip locked
      ),
      tree as (
        select run_id as root_id, run_id from candidates
        union all
        select tree.root_id, runs.run_id from runs join tree on runs.parent_run_id = tree.run_id
      ),
      doomed as (
        select tree.run_id from tree
        where tree.root_id not in (
          select t.root_id from tree t join runs r on r.run_id = t.run_id where r.status not in (${finals})
        )
      ),
      deleted as (
        delete from runs where run_id in (select run_id from doomed) returning run_id, parent_run_id, session_id, tenant_key
      )
      select
        (select count(*) from deleted)::int as runs,
        (select json_agg(s) from (select distinct tenant_key, session_id from deleted) s) as sessions`.execute(
      trx,
    );
    const row = rows[0] ?? { runs: 0, sessions: null };
    const sessions = row.sessions?.length ? await deleteEmptySessions(trx, row.sessions) : 0;
    return { runs: row.runs, sessions };
  });
}

/** A session by its key columns, as a pruned run named it. */
interface SessionRef {
  tenant_key: string;
  session_id: string;
}

/**
 * Deletes the rows of those of `sessions` that hold no run any more, and counts them all: a session
 * opened by a run that named none has no row (implicit-session.ts) and is emptied all the same.
 */
async function deleteEmptySessions(
  db: Kysely<Database>,
  sessions: readonly SessionRef[],
): Promise<number> {
  const { rows } = await sql<{ sessions: number }>`
    with emptied as (
      select r.tenant_key, r.session_id
      from jsonb_to_recordset(${JSON.stringify(sessions)}::jsonb) as r(tenant_key text, session_id text)
      where not exists (
        select 1 from runs where runs.tenant_key = r.tenant_key and runs.session_id = r.session_id
      )
    ),
    deleted as (
      delete from sessions s using emptied e
      where s.tenant_key = e.tenant_key and s.session_id = e.session_id
    )
    select count(*)::int as sessions from emptied`.execute(db);
  return rows[0]?.sessions ?? 0;
}

/** The cut-off of a retention of `days` days at `now`; undefined for 0 (keep everything). */
export function retentionCutoff(days: number, now = new Date()): Date | undefined {
  return days > 0 ? new Date(now.getTime() - days * 86_400_000) : undefined;
}
