import type { RunWaiting } from '@cairn/engine';
import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.js';

/**
 * A run's job delayed again before its claim (docs/capacity.md, "Back from a park" and "Before the
 * first claim"), in one round trip: its view shows `waiting` with the time the job is due again,
 * never the past time of an earlier park, whether it is a RUNNING run parked for capacity or a
 * PENDING run held in line before its first claim (the claim clears it); resolves true when its
 * deadline has passed by the store's clock, so that the pickup claims it and the claim ends it as
 * it ends any run claimed past its deadline.
 */
export async function recordParkedAgain(
  db: Kysely<Database>,
  runId: string,
  waiting: RunWaiting,
): Promise<boolean> {
  const row = await db
    .with('moved', (qb) =>
      qb
        .updateTable('runs')
        .set({
          waiting: sql<string>`jsonb_build_object('for', 'capacity', 'model', ${waiting.model}::text, 'until', ${waiting.until}::text)`,
        })
        .where('run_id', '=', runId)
        .where((eb) =>
          eb.or([
            eb('status', '=', 'PENDING'),
            eb.and([eb('status', '=', 'RUNNING'), eb(sql`waiting->>'for'`, '=', 'capacity')]),
          ]),
        )
        .returning('run_id'),
    )
    .selectFrom('runs')
    .select(sql<boolean>`coalesce(deadline_at <= now(), false)`.as('past_deadline'))
    .where('run_id', '=', runId)
    .executeTakeFirst();
  return row?.past_deadline ?? false;
}
