import { sql } from 'kysely';
import type { Kysely } from 'kysely';

/**
 * Entity caps: `served_entities.caps` (an entity's `caps`, what a request may
 * not exceed: `{ budget?: { maxTokens?, maxCostMicroUsd? }, maxDurationMs? }`,
 * as its workers announce it; null: none). Does not rewrite the table.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table served_entities add column caps jsonb`.execute(db);
}

/** Drops the column. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table served_entities drop column caps`.execute(db);
}
