import pg from 'pg';
import type { AnyWorker } from './backend-handle.js';
import {
  LIVENESS_NAME_PREFIX,
  LIVENESS_RECONNECT_MS,
  WATCHER_TERM_MS,
  type LivenessProbe,
} from './worker-liveness.js';

/**
 * The open connections that count as liveness connections: the queue's own
 * database and role only. Any role on the server may name a connection
 * `cairn-live:<id>` (and `pg_stat_activity` shows every database's), so a
 * foreign one must not keep a dead worker alive. `$n` is the name prefix.
 */
const OWN_SESSIONS = (n: number) =>
  `from pg_stat_activity a where a.datname = current_database() and a.usename = session_user
     and a.application_name like $${n}::text || '%'`;

/**
 * The liveness probe on BullMQ's PostgreSQL backend: the worker's own
 * connection carries `application_name` `cairn-live:<BullMQ id>`; the workers
 * holding such a connection are listed in `cairn_live_workers`, a table of
 * the queue's schema, from the moment it is open (and again at each look, so
 * a worker taken off by mistake comes back). The watcher's term is a row of
 * `cairn_live_watcher` (holder and expiry, taken by compare-and-set), which
 * only roles that may write the queue's tables can take: it passes when it
 * expires ({@link WATCHER_TERM_MS}) or when its holder's liveness connection
 * is gone. An advisory lock would not do: any role connected to the database
 * can take any key.
 */
export async function openPostgresLivenessProbe(
  worker: AnyWorker,
  options: { url: string; schema: string; queueName: string },
): Promise<LivenessProbe> {
  const schema = pg.escapeIdentifier(options.schema);
  const table = `${schema}.cairn_live_workers`;
  const watcherTable = `${schema}.cairn_live_watcher`;
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
  const reconnectSoon = () =>
    setTimeout(() => {
      // Back at once, not at the next look: a connection missing for long is a dead worker.
      if (!closed && !own) void ownClient().catch(reconnectSoon);
    }, LIVENESS_RECONNECT_MS).unref();
  const ownClient = (): Promise<pg.Client> => {
    if (own) return Promise.resolve(own);
    opening ??= connectOwn()
      .then((opened) => {
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
  await createTable(
    query,
    `create table if not exists ${table} (
      queue text not null, worker_id text not null, listed_at timestamptz not null default now(),
      primary key (queue, worker_id))`,
  );
  await createTable(
    query,
    `create table if not exists ${watcherTable} (
      queue text primary key, worker_id text not null, until_at timestamptz not null)`,
  );
  await query(
    `insert into ${watcherTable} (queue, worker_id, until_at) values ($1, '', '-infinity')
     on conflict do nothing`,
    [options.queueName],
  );
  await query(list, [options.queueName, worker.id]);
  return {
    holdWatch: async () => {
      await query(list, [options.queueName, worker.id]);
      // The holder renews once half its term is gone; another takes an expired term, or one whose holder's connection is gone.
      const { rows } = await query<{ held: boolean }>(
        `with taken as (
           update ${watcherTable} w set worker_id = $2, until_at = clock_timestamp() + $4::int * interval '1 ms'
            where w.queue = $1 and case when w.worker_id = $2
              then w.until_at < clock_timestamp() + $4::int / 2 * interval '1 ms'
              else w.until_at < clock_timestamp()
                or not exists (select 1 ${OWN_SESSIONS(3)} and a.application_name = $3 || w.worker_id)
              end
           returning 1)
         select exists (select 1 from taken) or exists (
           select 1 from ${watcherTable}
            where queue = $1 and worker_id = $2 and until_at > clock_timestamp()) as held`,
        [options.queueName, worker.id, LIVENESS_NAME_PREFIX, WATCHER_TERM_MS],
      );
      return rows[0]?.held === true;
    },
    census: async () => {
      const { rows } = await query<{ listed: string[]; connected: string[] }>(
        `select (select coalesce(array_agg(worker_id), '{}') from ${table} where queue = $1) as listed,
                (select coalesce(array_agg(substr(a.application_name, length($2::text) + 1)), '{}')
                   ${OWN_SESSIONS(2)}) as connected`,
        [options.queueName, LIVENESS_NAME_PREFIX],
      );
      const connected = new Set(rows[0]?.connected);
      const missing = new Set(rows[0]?.listed.filter((id) => !connected.has(id)));
      return { missing, ownSeen: connected.has(worker.id) };
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
    forget: async (deadWorkerId) =>
      void (await query(`delete from ${table} where queue = $1 and worker_id = $2`, [
        options.queueName,
        deadWorkerId,
      ])),
    clearStalledThrottle: async () =>
      void (await query(`delete from ${schema}.meta where queue = $1 and field = 'stalled-check'`, [
        options.queueName,
      ])),
    close: async () => {
      await query(`delete from ${table} where queue = $1 and worker_id = $2`, [
        options.queueName,
        worker.id,
      ]).catch(() => undefined);
      await query(
        `update ${watcherTable} set until_at = '-infinity' where queue = $1 and worker_id = $2`,
        [options.queueName, worker.id],
      ).catch(() => undefined);
      closed = true;
      const client = own;
      own = undefined;
      await client?.end().catch(() => undefined);
    },
  };
}

/** Creates one of the probe's tables once; workers starting together may race to, and one wins. */
async function createTable(
  query: (text: string) => Promise<unknown>,
  create: string,
): Promise<void> {
  try {
    await query(create);
  } catch {
    // A concurrent `create table if not exists` can fail on the type's name: the table is there now.
    await query(create);
  }
}
