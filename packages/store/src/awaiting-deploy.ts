import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.js';

/**
 * Records that a worker left the run for another (a worker with its entity,
 * or with its definition), in one statement: the wait starts now unless one
 * started since the run last changed (`updated_at`: a claim, decision or
 * continue request starts a new one; a checkpoint when `updated_at` is over
 * 5 s old). Returns how long the run
 * has waited, in ms by Postgres's clock (0 the first time), or undefined
 * when there is no such run. Leaves `updated_at` alone.
 */
export async function awaitDeploy(
  db: Kysely<Database>,
  runId: string,
): Promise<number | undefined> {
  const { rows } = await sql<{ waited_ms: number }>`
    update runs
       set awaiting_deploy_since = case when awaiting_deploy_since >= updated_at then awaiting_deploy_since else now() end
     where run_id = ${runId}
    returning (extract(epoch from now() - awaiting_deploy_since) * 1000)::float8 as waited_ms`.execute(
    db,
  );
  return rows[0]?.waited_ms;
}
