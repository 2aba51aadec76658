import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from './schema.js';
import { tenantKeyOf, type SessionKey } from './session-key.js';

/**
 * A run created without a session opens its own session and writes no `sessions` row for it: the
 * session is implicit, read from its runs. Its row is written only when something needs one: a later
 * run that names the session (the row then takes the first run's `user_id` and `created_at`, as if
 * that run had opened it), or a session delete (which locks it). What a session reads as, row or not:
 * `user_id` of its first run, `created_at` its first run's, `updated_at` its latest run's (every
 * run that joins a session marks its row updated with its own `now()`, which is that run's `created_at`).
 */
interface ImplicitSessionRow {
  user_id: string | null;
  tenant_id: string | null;
  created_at: Date;
  updated_at: Date;
}

/** A session without a row, as its runs read; undefined when it has no run either. */
export async function implicitSession(
  db: Kysely<Database>,
  key: SessionKey,
): Promise<ImplicitSessionRow | undefined> {
  const row = await db
    .selectFrom('runs')
    .select([
      sql<string | null>`(array_agg(user_id order by created_at, run_id))[1]`.as('user_id'),
      sql<string | null>`(array_agg(tenant_id order by created_at, run_id))[1]`.as('tenant_id'),
      sql<Date>`min(created_at)`.as('created_at'),
      sql<Date>`max(created_at)`.as('updated_at'),
    ])
    .where('tenant_key', '=', tenantKeyOf(key.tenantId))
    .where('session_id', '=', key.sessionId)
    .having(sql`count(*)`, '>', 0)
    .executeTakeFirst();
  return row;
}

/**
 * The session's first run (its `user_id` and `created_at`), one entry of the runs' session index, as a
 * lateral subquery: what a `sessions` row written after its runs takes, so the session reads the same.
 */
export function firstRunOfSession(key: SessionKey): RawBuilder<unknown> {
  return sql`(select user_id, created_at from runs
    where tenant_key = ${tenantKeyOf(key.tenantId)} and session_id = ${key.sessionId}
    order by created_at, run_id limit 1)`;
}
