import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.js';

/**
 * A run's job delayed again before its claim (docs/capacity.md, "Back from a park"), in one round
 * trip: a RUNNING run parked for capacity gets its new `until` in its `waiting`, so its view never
 * shows the past time of an earlier park (a PENDING run, never claimed, has no `waiting`: nothing
 * is written); resolves true when its deadline has passed by the store's clock, so that the pickup
 * claims it and the claim ends it as it ends any run claimed past its deadline.
 */
export async function recordParkedAgain(
  db: Kysely<Database>,
  runId: string,
  until: Date,
): Promise<boolean> {
  const row = await db
    .with('moved', (qb) =>
      qb
        .updateTable('runs')
        .set({
          waiting: sql<string>`jsonb_set(waiting, '{until}', to_jsonb(${until.toISOString()}::text))`,
        })
        .where('run_id', '=', runId)
        .where('status', '=', 'RUNNING')
        .where(sql<boolean>`waiting->>'for' = 'capacity'`)
        .returning('run_id'),
    )
    .selectFrom('runs')
    .select(sql<boolean>`coalesce(deadline_at <= now(), false)`.as('past_deadline'))
    .where('run_id', '=', runId)
    .executeTakeFirst();
  return row?.past_deadline ?? false;
}
