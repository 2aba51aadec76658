import { sql } from 'kysely';
import type { RawBuilder } from 'kysely';
import type { StoredUsage } from './usage-column.js';

/**
 * For a claim's statement: the run's attempts since its last progress, its
 * last committed message, its last continue request or the last resume of a
 * suspension (a fresh allowance after `CAIRN_ON_ATTEMPTS_EXHAUSTED=suspend`),
 * whichever is newer (the claim adds one). Reads the newest write of messages backwards along
 * the primary key, so the cost does not grow with history.
 */
export function attemptsSinceProgress(runId: string): RawBuilder<number> {
  return sql<number>`(select count(*)::int
      from run_attempts p
     where p.run_id = ${runId}
       and p.reason <> 'capacity'
       and p.started_at > greatest(
             coalesce((select created_at from run_commits where run_id = ${runId} and messages is not null
                        order by last_seq desc, end_idx desc limit 1), '-infinity'),
             coalesce((select max(requested_at) from run_continue_requests where run_id = ${runId}), '-infinity'),
             coalesce((select attempts_reset_at from runs where run_id = ${runId}), '-infinity')))`;
}

/**
 * For a claim's statement: the usage of every run of the claimed run's tree
 * (itself and its member runs, recursively), only when it has a budget
 * (null otherwise): what its budget is held to, read by the claim itself.
 */
export function budgetedTreeUsage(runId: string): RawBuilder<StoredUsage[] | null> {
  return sql<StoredUsage[] | null>`(case when run.budget is null then null else (
      with recursive tree(run_id) as (
        select ${runId}::text
        union all
        select r.run_id from runs r join tree on r.parent_run_id = tree.run_id)
      select coalesce(json_agg(t.usage), '[]'::json) from runs t where t.run_id in (select run_id from tree)) end)`;
}

/** For a claim's statement: the run's waiting continue request (`{ request_id, input, upgrade, requested_at }`), or null. */
export function waitingContinueRequest(): RawBuilder<{
  request_id: string;
  input: string | null;
  upgrade: boolean;
  requested_at: string;
} | null> {
  return sql`(select json_build_object('request_id', c.request_id::text, 'input', c.input, 'upgrade', c.upgrade, 'requested_at', c.requested_at)
      from run_continue_requests c
     where c.request_id = run.waiting_continue_request and c.applied_epoch is null)`;
}
