import { sql } from 'kysely';
import type { Kysely } from 'kysely';

/**
 * Implicit sessions (issue #29, storage): a run created without a session no
 * longer writes a `sessions` row (about 410 B of WAL per run); its session
 * reads from its runs until something needs the row
 * (packages/store/src/implicit-session.ts). The runs' foreign key to
 * `sessions` goes, since such a run names a session that has no row. Rows
 * already there stay and read as before.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table runs drop constraint if exists runs_session_fkey`.execute(db);
}

/** Writes the row of every implicit session (as its runs read) and puts the foreign key back. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    insert into sessions (session_id, user_id, tenant_id, created_at, updated_at)
    select session_id,
      (array_agg(user_id order by created_at, run_id))[1],
      (array_agg(tenant_id order by created_at, run_id))[1],
      min(created_at), max(created_at)
    from runs
    group by tenant_key, session_id
    on conflict (tenant_key, session_id) do nothing`.execute(db);
  await sql`
    alter table runs add constraint runs_session_fkey
    foreign key (tenant_key, session_id) references sessions (tenant_key, session_id)`.execute(db);
}
