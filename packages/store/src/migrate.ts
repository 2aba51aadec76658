import { Migrator } from 'kysely';
import type { Kysely, Migration, MigrationResult } from 'kysely';
import { MigrationError, StoreNotMigratedError } from './errors.js';
import * as m0001 from './migrations/0001_initial.js';
import * as m0002 from './migrations/0002_lifecycle.js';
import * as m0003 from './migrations/0003_pending_actions.js';
import * as m0003b from './migrations/0003_pending_actions_args_schema.js';
import * as m0004 from './migrations/0004_lean_commit.js';
import * as m0005a from './migrations/0005_a_tenants_idempotency.js';
import * as m0005b from './migrations/0005_b_retention.js';
import * as m0006 from './migrations/0006_served_entities.js';
import * as m0007a from './migrations/0007_a_definition_hash.js';
import * as m0007a2 from './migrations/0007_a_version_grace_start.js';
import * as m0007c from './migrations/0007_c_overdue_actions.js';
import * as m0007d from './migrations/0007_d_revoked_browser_sessions.js';
import * as m0007e from './migrations/0007_e_run_list.js';
import * as m0008a from './migrations/0008_a_tenant_sessions.js';
import * as m0009a from './migrations/0009_a_capacity_waits.js';
import * as m0009b from './migrations/0009_b_model_capacity.js';
import * as m0010a from './migrations/0010_a_deadlines.js';
import * as m0010b from './migrations/0010_b_budgets.js';
import * as m0010c from './migrations/0010_c_tenant_day_spend.js';
import * as m0011 from './migrations/0011_forks.js';
import * as m0012a from './migrations/0012_a_event_batches.js';
import * as m0013l from './migrations/0013_l_run_list_search.js';
import * as m0013l2 from './migrations/0013_l_run_list_search_tuning.js';
import * as m0014o from './migrations/0014_o_overview_indexes.js';
import * as m0014o2 from './migrations/0014_o_tenant_model_day_spend.js';
import * as m0015a from './migrations/0015_a_run_search_texts.js';
import * as m0016 from './migrations/0016_entity_caps.js';
import * as m0017 from './migrations/0017_lean_writes.js';
import * as m0018 from './migrations/0018_derived_events.js';
import * as m0019 from './migrations/0019_run_commits.js';
import * as m0020 from './migrations/0020_commit_tool_calls.js';
import * as m0021 from './migrations/0021_compact_usage.js';
import * as m0022 from './migrations/0022_compressed_commits.js';
import * as m0023 from './migrations/0023_compact_calls.js';
import * as m0024 from './migrations/0024_adaptive_ceiling.js';
import * as m0025 from './migrations/0025_schedules.js';
import * as m0026 from './migrations/0026_webhooks.js';
import * as m0027 from './migrations/0027_suspend.js';
import * as m0028 from './migrations/0028_capacity_line.js';
import * as m0029 from './migrations/0029_webhook_run_order.js';
import * as m0030 from './migrations/0030_paced_grants.js';
import * as m0031 from './migrations/0031_capacity_probe.js';
import * as m0031w from './migrations/0031_w_run_states.js';
import * as m0032w from './migrations/0032_w_run_states_back.js';
import * as m0033w from './migrations/0033_w_paused_index.js';
import * as m0034w from './migrations/0034_w_search_text_insert.js';
import * as m0035w from './migrations/0035_w_runs_fillfactor.js';
import * as m0036h from './migrations/0036_h_implicit_sessions.js';
import * as m0037h from './migrations/0037_h_search_chunks.js';

/** Every migration by name, in order; files are only ever added. */
export const MIGRATIONS: Readonly<Record<string, Migration>> = Object.freeze({
  '0001_initial': m0001,
  '0002_lifecycle': m0002,
  '0003_pending_actions': m0003,
  '0003_pending_actions_args_schema': m0003b,
  '0004_lean_commit': m0004,
  '0005_a_tenants_idempotency': m0005a,
  '0005_b_retention': m0005b,
  '0006_served_entities': m0006,
  '0007_a_definition_hash': m0007a,
  '0007_a_version_grace_start': m0007a2,
  '0007_c_overdue_actions': m0007c,
  '0007_d_revoked_browser_sessions': m0007d,
  '0007_e_run_list': m0007e,
  '0008_a_tenant_sessions': m0008a,
  '0009_a_capacity_waits': m0009a,
  '0009_b_model_capacity': m0009b,
  '0010_a_deadlines': m0010a,
  '0010_b_budgets': m0010b,
  '0010_c_tenant_day_spend': m0010c,
  '0011_forks': m0011,
  '0012_a_event_batches': m0012a,
  '0013_l_run_list_search': m0013l,
  '0013_l_run_list_search_tuning': m0013l2,
  '0014_o_overview_indexes': m0014o,
  '0014_o_tenant_model_day_spend': m0014o2,
  '0015_a_run_search_texts': m0015a,
  '0016_entity_caps': m0016,
  '0017_lean_writes': m0017,
  '0018_derived_events': m0018,
  '0019_run_commits': m0019,
  '0020_commit_tool_calls': m0020,
  '0021_compact_usage': m0021,
  '0022_compressed_commits': m0022,
  '0023_compact_calls': m0023,
  '0024_adaptive_ceiling': m0024,
  '0025_schedules': m0025,
  '0026_webhooks': m0026,
  '0027_suspend': m0027,
  '0028_capacity_line': m0028,
  '0029_webhook_run_order': m0029,
  '0030_paced_grants': m0030,
  '0031_capacity_probe': m0031,
  '0031_w_run_states': m0031w,
  '0032_w_run_states_back': m0032w,
  '0033_w_paused_index': m0033w,
  '0034_w_search_text_insert': m0034w,
  '0035_w_runs_fillfactor': m0035w,
  '0036_h_implicit_sessions': m0036h,
  '0037_h_search_chunks': m0037h,
});

/**
 * Applies every pending migration; safe to run concurrently (Kysely locks).
 * Throws `MigrationError` naming the failed migration.
 *
 * @example
 * const db = createDb(process.env.DATABASE_URL!);
 * await migrate(db);
 */
export async function migrate<DB>(db: Kysely<DB>): Promise<MigrationResult[]> {
  const { error, results = [] } = await migratorFor(db).migrateToLatest();
  if (error !== undefined) {
    const failed = results.find((r) => r.status === 'Error');
    throw new MigrationError(failed?.migrationName, { cause: error });
  }
  return results;
}

/**
 * Checks, without changing anything, that every migration of this build has
 * been applied. Throws `StoreNotMigratedError` naming the pending ones and
 * `npm run migrate`, so a process started before the migration says what to run.
 *
 * @example
 * await (config.migrate ? migrate(db) : assertMigrated(db));
 */
export async function assertMigrated<DB>(db: Kysely<DB>): Promise<void> {
  const migrations = await migratorFor(db).getMigrations();
  const pending = migrations.filter((m) => m.executedAt === undefined).map((m) => m.name);
  if (pending.length > 0) throw new StoreNotMigratedError(pending);
}

function migratorFor<DB>(db: Kysely<DB>): Migrator {
  return new Migrator({
    db,
    provider: { getMigrations: () => Promise.resolve({ ...MIGRATIONS }) },
    // Slices number their migrations apart (0002, 0003, ...) and land in any order: a store migrated
    // with a later number must still take an earlier one that lands after it.
    allowUnorderedMigrations: true,
  });
}
