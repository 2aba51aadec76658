import pg from 'pg';

/** A pg pool that survives a Postgres restart: errors of dead connections, idle or checked out, are ignored. */
export function harnessPool(url: string): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

/** SQL: the scenario's top-level runs (tagged by the submitter). */
export const TOP_LEVEL_RUNS = `select run_id from runs where parent_run_id is null and metadata->>'chaos_scenario' = $1`;

/** SQL: the scenario's runs, top-level and member runs. */
export const SCENARIO_RUNS = `select run_id from runs where run_id in (${TOP_LEVEL_RUNS})
  union all select run_id from runs where parent_run_id in (${TOP_LEVEL_RUNS})`;

/** Counts of the scenario's top-level runs by status. */
export async function statusCounts(db: pg.Pool, scenario: string): Promise<Record<string, number>> {
  const { rows } = await db.query<{ status: string; n: number }>(
    `select status, count(*)::int as n from runs where run_id in (${TOP_LEVEL_RUNS}) group by status`,
    [scenario],
  );
  return Object.fromEntries(rows.map((r) => [r.status, r.n]));
}

/** The top-level runs whose attempt by `workerId` is open (the runs that worker holds). */
export async function heldRuns(
  db: pg.Pool,
  workerId: string,
): Promise<{ run_id: string; epoch: number }[]> {
  const { rows } = await db.query<{ run_id: string; epoch: number }>(
    `select a.run_id, a.epoch from run_attempts a join runs r using (run_id)
     where a.worker_id = $1 and a.ended_at is null and r.parent_run_id is null`,
    [workerId],
  );
  return rows;
}

/** Of the `held` attempts: how many have ended (finished or superseded), and how many runs another claim took over. */
export async function releasedAttempts(
  db: pg.Pool,
  held: readonly { run_id: string; epoch: number }[],
): Promise<{ released: number; takenOver: number }> {
  if (held.length === 0) return { released: 0, takenOver: 0 };
  const { rows } = await db.query<{ released: number; taken_over: number }>(
    `select count(*) filter (where a.ended_at is not null)::int as released,
            count(*) filter (where exists (select 1 from run_attempts n where n.run_id = h.run_id and n.epoch > h.epoch))::int as taken_over
     from unnest($1::text[], $2::int[]) as h(run_id, epoch)
     join run_attempts a on a.run_id = h.run_id and a.epoch = h.epoch`,
    [held.map((h) => h.run_id), held.map((h) => h.epoch)],
  );
  return { released: rows[0]?.released ?? 0, takenOver: rows[0]?.taken_over ?? 0 };
}

/** Every run's `last_checkpoint_at_message_index` right now. */
export async function checkpointIndexes(db: pg.Pool): Promise<Map<string, number>> {
  const { rows } = await db.query<{ run_id: string; i: number }>(
    'select run_id, last_checkpoint_at_message_index as i from runs',
  );
  return new Map(rows.map((r) => [r.run_id, r.i]));
}

/** Retries `query` while Postgres is away (restart), up to `timeoutMs`. */
export async function retrying<T>(query: () => Promise<T>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await query();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}
