import { sql } from 'kysely';
import type { Kysely } from 'kysely';

/**
 * Schedules (issue #32): `schedules` holds what a schedule starts (an entity, an input and the
 * run create fields), when (a cron pattern in a time zone, or an interval), its overlap policy
 * and whether it is paused; `schedule_firings` holds one row per firing, keyed by the schedule
 * and the firing's time, so that a firing delivered twice finds the first delivery's row and
 * its run. A firing that started a run names it (`run_id`: null while the run is being created;
 * no foreign key, so it keeps naming a run that retention or a session delete removed, which
 * readers find gone); a skipped firing stays as a row of its own (`outcome` `skipped`).
 * Firings have no foreign key to their schedule: deleting a schedule keeps the record of what
 * it started. Nothing on a run's hot path reads or writes either table.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('schedules')
    .addColumn('schedule_id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text')
    .addColumn('entity_kind', 'text', (c) =>
      c.notNull().check(sql`entity_kind in ('agent', 'team')`),
    )
    .addColumn('entity_name', 'text', (c) => c.notNull())
    .addColumn('input', 'text', (c) => c.notNull())
    .addColumn('run_fields', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('cron', 'text')
    .addColumn('timezone', 'text')
    .addColumn('every_ms', 'bigint')
    .addColumn('overlap', 'text', (c) =>
      c
        .notNull()
        .defaultTo('skip')
        .check(sql`overlap in ('skip', 'allow', 'buffer_one')`),
    )
    .addColumn('paused', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addCheckConstraint(
      'schedules_one_timing',
      sql`(cron is not null and timezone is not null and every_ms is null)
        or (cron is null and timezone is null and every_ms is not null)`,
    )
    .execute();
  await db.schema
    .createIndex('schedules_tenant_created_idx')
    .on('schedules')
    .columns(['tenant_id', 'created_at'])
    .execute();
  await db.schema
    .createTable('schedule_firings')
    .addColumn('schedule_id', 'text', (c) => c.notNull())
    .addColumn('fire_time', 'timestamptz', (c) => c.notNull())
    .addColumn('tenant_id', 'text')
    .addColumn('outcome', 'text', (c) =>
      c.notNull().check(sql`outcome in ('started', 'skipped', 'buffered')`),
    )
    .addColumn('run_id', 'text')
    .addColumn('note', 'text')
    .addColumn('recorded_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('schedule_firings_pkey', ['schedule_id', 'fire_time'])
    .execute();
  // A run's firing, by index.
  await sql`create index schedule_firings_run_idx on schedule_firings (run_id)
    where run_id is not null`.execute(db);
  // `buffer_one`: at most one firing of a schedule waits for its previous run, whatever races.
  await sql`create unique index schedule_firings_one_buffered_idx on schedule_firings (schedule_id)
    where outcome = 'buffered'`.execute(db);
}

/** Drops both tables. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('schedule_firings').execute();
  await db.schema.dropTable('schedules').execute();
}
