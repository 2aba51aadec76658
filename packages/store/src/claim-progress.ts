import { sql } from 'kysely';
import type { RawBuilder } from 'kysely';

/**
 * For a claim's statement: the run's attempts since its last progress, its
 * last committed message or its last continue request, whichever is newer
 * (the claim adds one). Reads the newest message by the primary key, so the
 * cost does not grow with history.
 */
export function attemptsSinceProgress(runId: string): RawBuilder<number> {
  return sql<number>`(select count(*)::int
      from run_attempts p
     where p.run_id = ${runId}
       and p.reason <> 'capacity'
       and p.started_at > greatest(
             coalesce((select created_at from run_messages where run_id = ${runId} order by idx desc limit 1), '-infinity'),
             coalesce((select max(requested_at) from run_continue_requests where run_id = ${runId}), '-infinity')))`;
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
