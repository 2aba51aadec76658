import { sql } from 'kysely';
import type { Kysely } from 'kysely';

/**
 * Creates `served_entities`: the agents and teams workers serve, recorded by
 * each worker at start and refreshed while it runs, so that a producer can
 * validate entity names without loading their code.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('served_entities')
    .addColumn('entity_kind', 'text', (c) =>
      c.notNull().check(sql`entity_kind in ('agent', 'team')`),
    )
    .addColumn('entity_name', 'text', (c) => c.notNull())
    .addColumn('definition_hash', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('checkpoint', 'text', (c) =>
      c.notNull().check(sql`checkpoint in ('run', 'tool-batch', 'tool-call')`),
    )
    .addColumn('worker_id', 'text', (c) => c.notNull())
    .addColumn('first_seen_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('last_seen_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('served_entities_pkey', [
      'entity_kind',
      'entity_name',
      'definition_hash',
    ])
    .execute();
}

/** Drops `served_entities`. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('served_entities').execute();
}
