import pg from 'pg';
import type { AnyWorker } from './backend-handle.js';
import { LIVENESS_NAME_PREFIX, type LivenessProbe } from './worker-liveness.js';

/**
 * The liveness probe on BullMQ's PostgreSQL backend: the worker's own
 * connection carries `application_name` `cairn-live:<BullMQ id>` and holds a
 * session advisory lock while it is the fleet's watcher (released by the
 * server the moment the connection closes); `pg_stat_activity` shows the
 * open connections (their `application_name` to every role); the candidates
 * are the lock holders of the queue's active jobs. The worker must not take
 * a job before this probe is open (its backend starts it after).
 */
export async function openPostgresLivenessProbe(
  worker: AnyWorker,
  options: { url: string; schema: string; queueName: string },
): Promise<LivenessProbe> {
  const schema = pg.escapeIdentifier(options.schema);
  const connectOwn = async () => {
    const client = new pg.Client({
      connectionString: options.url,
      application_name: `${LIVENESS_NAME_PREFIX}${worker.id}`,
    });
    client.on('error', () => undefined);
    await client.connect();
    return client;
  };
  let own: pg.Client | undefined = await connectOwn();
  own.once('end', () => (own = undefined));
  let watching = false;
  const query = async <R extends pg.QueryResultRow>(text: string, values: unknown[]) => {
    if (!own) {
      watching = false;
      own = await connectOwn();
      const reopened = own;
      reopened.once('end', () => {
        if (own === reopened) own = undefined;
      });
    }
    return own.query<R>(text, values);
  };
  return {
    holdWatch: async () => {
      if (watching && own) return true;
      const { rows } = await query<{ held: boolean }>(
        'select pg_try_advisory_lock(hashtext($1)) as held',
        [`cairn-liveness:${options.schema}:${options.queueName}`],
      );
      watching = rows[0]?.held === true;
      return watching;
    },
    census: async () => {
      const { rows } = await query<{ holders: string[]; connected: string[] }>(
        `select (select coalesce(array_agg(distinct split_part(lock_token, ':', 1)), '{}')
                   from ${schema}.job where queue = $1 and state = 'active' and lock_token is not null) as holders,
                (select coalesce(array_agg(substr(application_name, $2::int)), '{}')
                   from pg_stat_activity where application_name like $3) as connected`,
        [options.queueName, LIVENESS_NAME_PREFIX.length + 1, `${LIVENESS_NAME_PREFIX}%`],
      );
      return { candidates: rows[0]?.holders ?? [], connected: new Set(rows[0]?.connected ?? []) };
    },
    releaseLocks: async (deadWorkerId) => {
      const { rows } = await query<{ id: string }>(
        `update ${schema}.job set locked_until_ms = 0
          where queue = $1 and state = 'active' and split_part(lock_token, ':', 1) = $2
         returning id`,
        [options.queueName, deadWorkerId],
      );
      return rows.map((r) => r.id);
    },
    // Nothing to forget: a dead worker stops being a candidate once its jobs move.
    forget: () => Promise.resolve(),
    clearStalledThrottle: async () =>
      void (await query(`delete from ${schema}.meta where queue = $1 and field = 'stalled-check'`, [
        options.queueName,
      ])),
    close: async () => {
      const client = own;
      own = undefined;
      await client?.end().catch(() => undefined);
    },
  };
}
