import { sql } from 'kysely';
import type { Kysely, RawBuilder } from 'kysely';
import { type RunStatus } from '@cairn/engine';
import { FINISH_WAITS_FOR_CONTINUE, type ContinueRequestRecord } from '@cairn/engine/store';
import type { Database } from './schema.js';

/** What {@link recordContinueRequest} did. */
export type RecordedContinue =
  | { recorded: true; request: ContinueRequestRecord }
  | { recorded: false; reason: 'waiting' | 'status' | 'not-found' };

/**
 * Stores a continue request with its input in ONE statement that checks the
 * run's status (and that no other request waits) under the run's row lock,
 * and names it in `runs.waiting_continue_request`, so a finish racing it is
 * refused until an execution applies it; `deadlineMs` moves the run's
 * deadline to that many ms from now in the same statement. An `upgrade` or a
 * `deadlineMs` without input while another request waits is merged into that
 * one (it is then `recorded`): the execution that takes it in may resume on a
 * changed definition, before the new deadline.
 */
export async function recordContinueRequest(
  db: Kysely<Database>,
  runId: string,
  request: {
    input: string | null;
    upgrade: boolean;
    statuses: readonly RunStatus[];
    deadlineMs?: number;
  },
): Promise<RecordedContinue> {
  const { input, upgrade, statuses } = request;
  const deadline = newDeadline(request.deadlineMs);
  const { rows } = await sql<{ request_id: string; requested_at: Date }>`
    with run as (
      update runs
         set waiting_continue_request = nextval(pg_get_serial_sequence('run_continue_requests', 'request_id')),
             updated_at = now()${deadline}
       where run_id = ${runId} and status = any(${statuses}) and waiting_continue_request is null
      returning run_id, waiting_continue_request
    )
    insert into run_continue_requests (request_id, run_id, input, upgrade)
    select waiting_continue_request, run_id, ${input}, ${upgrade} from run
    returning request_id::text, requested_at`.execute(db);
  const row = rows[0];
  if (row)
    return {
      recorded: true,
      request: { requestId: row.request_id, input, upgrade, requestedAt: row.requested_at },
    };
  if ((upgrade || request.deadlineMs !== undefined) && input === null) {
    const merged = await mergeIntoWaiting(db, runId, statuses, upgrade, deadline);
    if (merged) return { recorded: true, request: merged };
  }
  const run = await db
    .selectFrom('runs')
    .select(['status', 'waiting_continue_request'])
    .where('run_id', '=', runId)
    .executeTakeFirst();
  if (!run) return { recorded: false, reason: 'not-found' };
  return {
    recorded: false,
    reason:
      statuses.includes(run.status) && run.waiting_continue_request !== null ? 'waiting' : 'status',
  };
}

/**
 * Merges an input-less continue into the run's waiting request, in one statement that checks the
 * status: sets its `upgrade` (when asked) and the run's new `deadline`; the request, or undefined
 * when none waits.
 */
async function mergeIntoWaiting(
  db: Kysely<Database>,
  runId: string,
  statuses: readonly RunStatus[],
  upgrade: boolean,
  deadline: RawBuilder<unknown>,
): Promise<ContinueRequestRecord | undefined> {
  const { rows } = await sql<{
    request_id: string;
    input: string | null;
    upgrade: boolean;
    requested_at: Date;
  }>`
    with run as (
      update runs set updated_at = now()${deadline}
       where run_id = ${runId} and status = any(${statuses}) and waiting_continue_request is not null
      returning waiting_continue_request
    )
    update run_continue_requests c set upgrade = c.upgrade or ${upgrade}
      from run
     where c.request_id = run.waiting_continue_request and c.applied_epoch is null
    returning c.request_id::text, c.input, c.upgrade, c.requested_at`.execute(db);
  const row = rows[0];
  return (
    row && {
      requestId: row.request_id,
      input: row.input,
      upgrade: row.upgrade,
      requestedAt: row.requested_at,
    }
  );
}

/** The `SET` fragment of a continue's new deadline, `deadlineMs` from now (the store's clock); empty without one. */
function newDeadline(deadlineMs: number | undefined): RawBuilder<unknown> {
  return deadlineMs === undefined
    ? sql``
    : sql`, deadline_at = now() + ${deadlineMs}::double precision * interval '1 millisecond'`;
}

/** The waiting request `requestId` of the run, with its input. */
export async function readContinueRequest(
  db: Kysely<Database>,
  runId: string,
  requestId: string,
): Promise<ContinueRequestRecord | null> {
  const row = await db
    .selectFrom('run_continue_requests')
    .select(['request_id', 'input', 'upgrade', 'requested_at'])
    .where('run_id', '=', runId)
    .where('request_id', '=', requestId)
    .where('applied_epoch', 'is', null)
    .executeTakeFirst();
  return row
    ? {
        requestId: String(row.request_id),
        input: row.input,
        upgrade: row.upgrade,
        requestedAt: row.requested_at,
      }
    : null;
}

/**
 * The one writer's continue-request fragments: the `SET` that clears the
 * request this delta applies from the run row, the `WHERE` that refuses a
 * COMPLETED or ERROR finish while another request waits (but the one the
 * finish `keeps` waiting, untaken), and the CTE that marks the applied
 * request; all empty when they do not apply, so the common checkpoint
 * statement is unchanged.
 */
export function continueFragments(
  runId: string,
  epoch: number,
  requestId: string | undefined,
  finishStatus: RunStatus | undefined,
  keeps?: string,
): { set: RawBuilder<unknown>; where: RawBuilder<unknown>; cte: RawBuilder<unknown> | undefined } {
  const guarded = finishStatus !== undefined && FINISH_WAITS_FOR_CONTINUE.includes(finishStatus);
  const allowed = requestId ?? keeps;
  const where = !guarded
    ? sql``
    : allowed === undefined
      ? sql` and waiting_continue_request is null`
      : sql` and (waiting_continue_request is null or waiting_continue_request = ${allowed}::bigint)`;
  if (requestId === undefined) return { set: sql``, where, cte: undefined };
  return {
    set: sql`, waiting_continue_request = case when waiting_continue_request = ${requestId}::bigint then null else waiting_continue_request end`,
    where,
    cte: sql`applied_continue as (
      update run_continue_requests set applied_epoch = ${epoch}, applied_at = now()
        from run
       where run_continue_requests.run_id = run.run_id and request_id = ${requestId}::bigint and applied_epoch is null)`,
  };
}
