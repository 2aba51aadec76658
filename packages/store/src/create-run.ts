import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Kysely, QueryCreator, Transaction } from 'kysely';
import { IdempotencyKeyReusedError, RunNotFoundError } from '@cairn/engine';
import type { CreatedRun } from '@cairn/engine';
import { RUN_TRANSITIONS, type IdempotencyClaim, type NewRun } from '@cairn/engine/store';
import { firstRunOfSession } from './implicit-session.js';
import { assertParentHeld } from './parent-fence.js';
import { insertCommit } from './run-commits.js';
import { RUN_RECORD_COLUMNS, toRunRecord, type RunRecordRow } from './run-row.js';
import type { Database } from './schema.js';
import { tenantKeyOf, type SessionKey } from './session-key.js';
import { v7 as uuidV7 } from 'uuid';

/**
 * Creates a run in PENDING: joins or opens its session (the run's tenant's session of that id: another
 * tenant's of the same id is another session; a run that names none opens its own, implicit one) and inserts the run and its starting messages, in one
 * statement. With an idempotency key, that statement follows the key's claim in one transaction (a
 * concurrent request with the same key waits for this one, then gets its run); a member run's follows
 * the share-lock of its team's row.
 */
export async function createRun(db: Kysely<Database>, run: NewRun): Promise<CreatedRun> {
  try {
    return await insertRun(db, run);
  } catch (error) {
    // A fork's source deleted meanwhile (retention took it): the source is not found, nothing is written.
    if (run.sharedHistory && isForeignKeyViolation(error, 'runs_shared_history_run_id_fkey'))
      throw new RunNotFoundError(run.sharedHistory.runId);
    throw error;
  }
}

async function insertRun(db: Kysely<Database>, run: NewRun): Promise<CreatedRun> {
  // Time-ordered ids, but a member run's: an event cursor keys a member run by its id's first 12 hex
  // digits, which in a UUIDv7 are the millisecond that members a team starts together share.
  const runId = run.runId ?? (run.parentRunId ? randomUUID() : uuidV7());
  const sessionId = run.sessionId ?? uuidV7();
  const { idempotency } = run;
  const parentEpoch = run.parentRunId ? run.parentEpoch : undefined;
  // Most creates are the one statement, its own transaction; a key to claim or a team to fence first needs one around it.
  if (!idempotency && parentEpoch === undefined)
    return { ...toRunRecord(await insertRunStatement(db, run, runId, sessionId)), replayed: false };
  return db.transaction().execute(async (trx) => {
    if (idempotency) {
      const earlier = await claimIdempotencyKey(trx, idempotency, runId);
      if (earlier) return earlier;
    }
    if (run.parentRunId && parentEpoch !== undefined) {
      await assertParentHeld(trx, run.parentRunId, parentEpoch);
    }
    return {
      ...toRunRecord(await insertRunStatement(trx, run, runId, sessionId)),
      replayed: false,
    };
  });
}

/**
 * ONE statement: joins the run's session (marks it updated) or opens it, inserts the run and its starting
 * messages (a fork's own follow the history it shares with its source). A run that names no session opens
 * an implicit one and writes no session row (implicit-session.ts).
 */
async function insertRunStatement(
  db: Kysely<Database>,
  run: NewRun,
  runId: string,
  sessionId: string,
): Promise<RunRecordRow> {
  const tenantId = run.tenantId ?? null;
  const userId = run.userId ?? null;
  const messages = run.messages ?? [];
  const shared = run.sharedHistory?.length ?? 0;
  // The same text for every create of a kind (no message: an empty array), so its prepared plan is shared.
  const query = joinSession(db, run, { tenantId, sessionId }, userId)
    // Kysely writes a raw CTE body as it is: the parentheses are the statement's.
    .with(
      'new_commit',
      () =>
        sql<Record<string, unknown>>`(${insertCommit(
          messages,
          [],
          sql`(select ${runId}::text as run_id, 0 as event_seq, ${shared + messages.length}::int as last_checkpoint_at_message_index) as run`,
        )})`,
    );
  return query
    .insertInto('runs')
    .values({
      run_id: runId,
      session_id: sessionId,
      user_id: userId,
      parent_run_id: run.parentRunId ?? null,
      parent_tool_call_id: run.parentToolCallId ?? null,
      entity_kind: run.entity.kind,
      entity_name: run.entity.name,
      status: RUN_TRANSITIONS.create.to,
      input: run.input,
      content: null,
      checkpoint: run.checkpoint,
      last_checkpoint_at_message_index: shared + messages.length,
      ...(run.sharedHistory && {
        shared_history_run_id: run.sharedHistory.runId,
        shared_history_length: run.sharedHistory.length,
      }),
      ...(run.forkedFrom && { forked_from: JSON.stringify(run.forkedFrom) }),
      metadata: JSON.stringify(run.metadata ?? {}),
      cancel_requested_at: null,
      tenant_id: tenantId,
      definition_hash: run.definitionHash ?? null,
      ...(run.priority !== undefined && { priority: run.priority }),
      ...(run.budget !== undefined && { budget: JSON.stringify(run.budget) }),
      // Counted from the row's own `created_at` (the same `now()`), on the store's clock.
      deadline_at:
        run.deadlineMs !== undefined
          ? sql<Date>`now() + ${run.deadlineMs}::double precision * interval '1 millisecond'`
          : (run.deadlineAt ?? null),
    })
    .returning(RUN_RECORD_COLUMNS)
    .executeTakeFirstOrThrow();
}

/** What a CTE of raw SQL yields, to Kysely. */
type Row = Record<string, unknown>;

/**
 * The session part of the create: nothing for a run that opens its own session (no row: it reads from
 * its runs); for a member run, its row marked updated if it has one (a team whose session is implicit
 * has none); for a run that names its session, the row opened (as its first run would have opened it,
 * when the session was implicit until now) or marked updated.
 */
function joinSession(
  db: Kysely<Database>,
  run: NewRun,
  key: SessionKey,
  userId: string | null,
): QueryCreator<Database & { joined_session: Row }> {
  // A CTE Postgres never runs (nothing reads it), so the three kinds share the statement's shape.
  if (run.sessionId === undefined) return db.with('joined_session', () => sql<Row>`(select)`);
  if (run.parentRunId)
    return db.with(
      'joined_session',
      () => sql<Row>`(update sessions set updated_at = now()
        where tenant_key = ${tenantKeyOf(key.tenantId)} and session_id = ${key.sessionId})`,
    );
  return db.with(
    'joined_session',
    () => sql<Row>`(insert into sessions (session_id, user_id, tenant_id, created_at)
      select ${key.sessionId}::text,
        case when first_run.created_at is null then ${userId}::text else first_run.user_id end,
        ${key.tenantId}::text, coalesce(first_run.created_at, now())
      from (values (1)) as one left join lateral ${firstRunOfSession(key)} as first_run on true
      on conflict (tenant_key, session_id) do update set updated_at = now())`,
  );
}

/** Claims `claim.key` for `runId`; when an earlier request holds it, that request's run (or `IdempotencyKeyReusedError`). */
async function claimIdempotencyKey(
  trx: Transaction<Database>,
  claim: IdempotencyClaim,
  runId: string,
): Promise<CreatedRun | undefined> {
  const claimed = await trx
    .insertInto('run_idempotency_keys')
    .values({
      scope: claim.scope,
      idempotency_key: claim.key,
      run_id: runId,
      request_digest: claim.requestDigest,
    })
    .onConflict((oc) => oc.columns(['scope', 'idempotency_key']).doNothing())
    .returning('run_id')
    .executeTakeFirst();
  if (claimed) return undefined;
  const earlier = await trx
    .selectFrom('run_idempotency_keys')
    .innerJoin('runs', 'runs.run_id', 'run_idempotency_keys.run_id')
    .select(RUN_RECORD_COLUMNS.map((column) => `runs.${column}` as const))
    .select('run_idempotency_keys.request_digest')
    .where('run_idempotency_keys.scope', '=', claim.scope)
    .where('run_idempotency_keys.idempotency_key', '=', claim.key)
    .executeTakeFirstOrThrow();
  const { request_digest: digest, ...row } = earlier;
  if (digest !== claim.requestDigest) throw new IdempotencyKeyReusedError(claim.key, row.run_id);
  return { ...toRunRecord(row), replayed: true };
}

/** True when `error` is Postgres' foreign-key violation (23503) of `constraint`. */
function isForeignKeyViolation(error: unknown, constraint: string): boolean {
  const pgError = error as { code?: unknown; constraint?: unknown } | null;
  return pgError?.code === '23503' && pgError.constraint === constraint;
}
