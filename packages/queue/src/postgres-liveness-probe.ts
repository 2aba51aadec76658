import pg from 'pg';
import type { AnyWorker } from './backend-handle.js';
import {
  LIVENESS_NAME_PREFIX,
  LIVENESS_RECONNECT_MS,
  type LivenessProbe,
} from './worker-liveness.js';

/**
 * The liveness probe on BullMQ's PostgreSQL backend: the worker's own
 * connection carries `application_name` `cairn-live:<BullMQ id>` (seen by
 * every role in `pg_stat_activity`) and holds a session advisory lock while
 * it is the fleet's watcher (released by the server the moment the
 * connection closes); the workers holding such a connection are listed in
 * `cairn_live_workers`, a table of the queue's schema, from the moment it is
 * open (and again at each look, so a worker taken off by mistake comes back).
 */
export async function openPostgresLivenessProbe(
  worker: AnyWorker,
  options: { url: string; schema: string; queueName: string },
): Promise<LivenessProbe> {
  const table = `${pg.escapeIdentifier(options.schema)}.cairn_live_workers`;
  const connectOwn = async () => {
    const client = new pg.Client({
      connectionString: options.url,
      application_name: `${LIVENESS_NAME_PREFIX}${worker.id}`,
    });
    client.on('error', () => undefined);
    await client.connect();
    return client;
  };
  let own: pg.Client | undefined;
  /** The connection being opened, shared by the queries that wait for it (one named connection at a time). */
  let opening: Promise<pg.Client> | undefined;
  let closed = false;
  // The watcher's advisory lock lives with the connection: a new one holds none.
  let watching = false;
  const reconnectSoon = () =>
    setTimeout(() => {
      // Back at once, not at the next look: a connection missing for long is a dead worker.
      if (!closed && !own) void ownClient().catch(reconnectSoon);
    }, LIVENESS_RECONNECT_MS).unref();
  const ownClient = (): Promise<pg.Client> => {
    if (own) return Promise.resolve(own);
    opening ??= connectOwn()
      .then((opened) => {
        watching = false;
        opened.once('end', () => {
          if (own !== opened) return;
          own = undefined;
          reconnectSoon();
        });
        own = opened;
        return opened;
      })
      .finally(() => (opening = undefined));
    return opening;
  };
  const query = async <R extends pg.QueryResultRow>(text: string, values: unknown[] = []) =>
    (await ownClient()).query<R>(text, values);
  const list = `insert into ${table} (queue, worker_id) values ($1, $2) on conflict do nothing`;
  await createTable(query, table);
  await query(list, [options.queueName, worker.id]);
  return {
    holdWatch: async () => {
      await query(list, [options.queueName, worker.id]);
      if (watching) return true;
      const { rows } = await query<{ held: boolean }>(
        'select pg_try_advisory_lock(hashtext($1)) as held',
        [`cairn-liveness:${options.schema}:${options.queueName}`],
      );
      watching = rows[0]?.held === true;
      return watching;
    },
    census: async () => {
      const { rows } = await query<{ listed: string[]; connected: string[] }>(
        `select (select coalesce(array_agg(worker_id), '{}') from ${table} where queue = $1) as listed,
                (select coalesce(array_agg(substr(application_name, $2::int)), '{}')
                   from pg_stat_activity where application_name like $3) as connected`,
        [options.queueName, LIVENESS_NAME_PREFIX.length + 1, `${LIVENESS_NAME_PREFIX}%`],
      );
      return { listed: rows[0]?.listed ?? [], connected: new Set(rows[0]?.connected ?? []) };
    },
    releaseLocks: async (deadWorkerId) => {
      const { rows } = await query<{ id: string }>(
        `update ${pg.escapeIdentifier(options.schema)}.job set locked_until_ms = 0
          where queue = $1 and state = 'active' and split_part(lock_token, ':', 1) = $2
         returning id`,
        [options.queueName, deadWorkerId],
      );
      return rows.map((r) => r.id);
    },
    forget: async (deadWorkerId) =>
      void (await query(`delete from ${table} where queue = $1 and worker_id = $2`, [
        options.queueName,
        deadWorkerId,
      ])),
    clearStalledThrottle: async () =>
      void (await query(
        `delete from ${pg.escapeIdentifier(options.schema)}.meta where queue = $1 and field = 'stalled-check'`,
        [options.queueName],
      )),
    close: async () => {
      await query(`delete from ${table} where queue = $1 and worker_id = $2`, [
        options.queueName,
        worker.id,
      ]).catch(() => undefined);
      closed = true;
      const client = own;
      own = undefined;
      await client?.end().catch(() => undefined);
    },
  };
}

/** Creates the list of live workers once; workers starting together may race to, and one wins. */
async function createTable(
  query: (text: string) => Promise<unknown>,
  table: string,
): Promise<void> {
  const create = `create table if not exists ${table} (
    queue text not null, worker_id text not null, listed_at timestamptz not null default now(),
    primary key (queue, worker_id))`;
  try {
    await query(create);
  } catch {
    // A concurrent `create table if not exists` can fail on the type's name: the table is there now.
    await query(create);
  }
}
