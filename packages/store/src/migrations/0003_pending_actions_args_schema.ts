import type { Kysely } from 'kysely';

/** Adds `pending_actions.args_schema`: the tool's JSON Schema, so a producer with no tool code can check edited arguments. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('pending_actions').addColumn('args_schema', 'jsonb').execute();
}

/** Drops `pending_actions.args_schema`. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('pending_actions').dropColumn('args_schema').execute();
}
