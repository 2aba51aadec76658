import { sql } from 'kysely';
import type { Kysely } from 'kysely';

/**
 * Sessions scoped by tenant: the same `session_id` in two tenants is two sessions. `tenant_key` (the
 * tenant, '' for none: a key column cannot be null) is derived from `tenant_id` on `sessions` and `runs`;
 * the session key becomes `(tenant_key, session_id)` and `runs` references it. A run whose tenant differs
 * from its session's first takes its session's, which it belonged to.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    update runs set tenant_id = sessions.tenant_id
    from sessions
    where sessions.session_id = runs.session_id and runs.tenant_id is distinct from sessions.tenant_id`.execute(
    db,
  );
  await sql`alter table sessions add constraint sessions_tenant_id_check check (tenant_id <> '')`.execute(
    db,
  );
  await sql`alter table runs add constraint runs_tenant_id_check check (tenant_id <> '')`.execute(
    db,
  );
  await sql`alter table sessions add column tenant_key text generated always as (coalesce(tenant_id, '')) stored`.execute(
    db,
  );
  await sql`alter table runs add column tenant_key text generated always as (coalesce(tenant_id, '')) stored`.execute(
    db,
  );
  await sql`alter table runs drop constraint runs_session_id_fkey`.execute(db);
  await sql`alter table sessions drop constraint sessions_pkey`.execute(db);
  await sql`alter table sessions add constraint sessions_pkey primary key (tenant_key, session_id)`.execute(
    db,
  );
  await sql`
    alter table runs add constraint runs_session_fkey
    foreign key (tenant_key, session_id) references sessions (tenant_key, session_id)`.execute(db);
  await db.schema.dropIndex('runs_session_id_idx').execute();
  await db.schema
    .createIndex('runs_session_idx')
    .on('runs')
    .columns(['tenant_key', 'session_id', 'created_at'])
    .execute();
}

/** Restores the global session key; fails while two tenants hold sessions of the same id. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('runs_session_idx').execute();
  await db.schema
    .createIndex('runs_session_id_idx')
    .on('runs')
    .columns(['session_id', 'created_at'])
    .execute();
  await sql`alter table runs drop constraint runs_session_fkey`.execute(db);
  await sql`alter table sessions drop constraint sessions_pkey`.execute(db);
  await sql`alter table sessions add constraint sessions_pkey primary key (session_id)`.execute(db);
  await sql`alter table runs add constraint runs_session_id_fkey foreign key (session_id) references sessions (session_id)`.execute(
    db,
  );
  await sql`alter table runs drop column tenant_key`.execute(db);
  await sql`alter table sessions drop column tenant_key`.execute(db);
  await sql`alter table runs drop constraint runs_tenant_id_check`.execute(db);
  await sql`alter table sessions drop constraint sessions_tenant_id_check`.execute(db);
}
