import { FINAL_STATUSES } from '@cairn/engine';
import type { Kysely } from 'kysely';
import { SessionHasForksError, SessionHasLiveRunsError } from './errors.js';
import type { Database } from './schema.js';
import { tenantKeyOf, type SessionKey } from './session-key.js';

/**
 * Deletes a session and every run in it, with their messages, tool calls, attempts, events and pending
 * actions (by cascade), in one transaction. Returns false when there is no such session; throws
 * `SessionHasLiveRunsError` (nothing deleted) while one of its runs is not finished, and
 * `SessionHasForksError` while a run of another session reads its history through one of its runs.
 */
export async function deleteSession(db: Kysely<Database>, key: SessionKey): Promise<boolean> {
  const tenantKey = tenantKeyOf(key.tenantId);
  return db.transaction().execute(async (trx) => {
    // An implicit session gets its row first, so that this transaction locks it: a run that joins the
    // session meanwhile waits for the delete, as it waits for any session's (implicit-session.ts).
    await trx
      .insertInto('sessions')
      .columns(['session_id', 'user_id', 'tenant_id', 'created_at'])
      .expression(
        trx
          .selectFrom('runs')
          .select(['session_id', 'user_id', 'tenant_id', 'created_at'])
          .where('tenant_key', '=', tenantKey)
          .where('session_id', '=', key.sessionId)
          .orderBy('created_at')
          .orderBy('run_id')
          .limit(1),
      )
      .onConflict((oc) => oc.columns(['tenant_key', 'session_id']).doNothing())
      .execute();
    const session = await trx
      .selectFrom('sessions')
      .select('session_id')
      .where('tenant_key', '=', tenantKey)
      .where('session_id', '=', key.sessionId)
      .forUpdate()
      .executeTakeFirst();
    if (!session) return false;
    const runs = await trx
      .selectFrom('runs')
      .select(['run_id', 'status'])
      .where('tenant_key', '=', tenantKey)
      .where('session_id', '=', key.sessionId)
      .forUpdate()
      .execute();
    const live = runs.filter((r) => !FINAL_STATUSES.includes(r.status)).map((r) => r.run_id);
    if (live.length > 0) throw new SessionHasLiveRunsError(key.sessionId, live);
    if (runs.length > 0)
      await assertNoForksElsewhere(
        trx,
        key,
        runs.map((r) => r.run_id),
      );
    if (runs.length > 0) {
      await trx
        .deleteFrom('runs')
        .where('tenant_key', '=', tenantKey)
        .where('session_id', '=', key.sessionId)
        .execute();
    }
    await trx
      .deleteFrom('sessions')
      .where('tenant_key', '=', tenantKey)
      .where('session_id', '=', key.sessionId)
      .execute();
    return true;
  });
}

/** Throws `SessionHasForksError` when a run of another session reads its history through one of `runIds`. */
async function assertNoForksElsewhere(
  db: Kysely<Database>,
  key: SessionKey,
  runIds: string[],
): Promise<void> {
  const forks = await db
    .selectFrom('runs')
    .select('run_id')
    .where('shared_history_run_id', 'in', runIds)
    .where((eb) =>
      eb.or([
        eb('tenant_key', '!=', tenantKeyOf(key.tenantId)),
        eb('session_id', '!=', key.sessionId),
      ]),
    )
    .execute();
  if (forks.length > 0)
    throw new SessionHasForksError(
      key.sessionId,
      forks.map((f) => f.run_id),
    );
}
