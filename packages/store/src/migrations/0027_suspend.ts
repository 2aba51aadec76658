import { sql } from 'kysely';
import type { Kysely } from 'kysely';

/**
 * An operator's suspend (issue #32): `runs.suspend_request` (on a tree's root run: `{ runId, now }`,
 * the run to stop at its next checkpoint boundary, set by `POST /v1/runs/:run_id/suspend` while it
 * runs, cleared by the write that suspends it or by the root's final status), `runs.attempts_reset_at`
 * (when a `suspended` action of the run was last approved: its attempts are counted from there, a
 * fresh allowance after `CAIRN_ON_ATTEMPTS_EXHAUSTED=suspend`) and pending actions of kind
 * `suspended` (the action a suspended run waits on; approving it resumes the run). Nullable columns
 * and a constraint added `not valid`: neither rewrites nor scans a table.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table runs add column suspend_request jsonb, add column attempts_reset_at timestamptz`.execute(
    db,
  );
  await sql`alter table pending_actions drop constraint pending_actions_kind_check`.execute(db);
  await sql`alter table pending_actions add constraint pending_actions_kind_check check (kind in ('approval', 'external', 'budget', 'suspended')) not valid`.execute(
    db,
  );
}

/** Drops the column; `suspended` actions must be gone first. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table pending_actions drop constraint pending_actions_kind_check`.execute(db);
  await sql`alter table pending_actions add constraint pending_actions_kind_check check (kind in ('approval', 'external', 'budget'))`.execute(
    db,
  );
  await sql`alter table runs drop column suspend_request, drop column attempts_reset_at`.execute(
    db,
  );
}
