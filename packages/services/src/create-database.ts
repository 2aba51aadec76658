import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** A database created for one test (or one benchmark), with its own URL. */
export interface TestDatabase {
  /** Connection URL of this database (the admin URL with its database name replaced). */
  url: string;
  /** The database's name. */
  name: string;
  /** Drops the database, closing any connections still open on it (`WITH (FORCE)`); idempotent. */
  drop(): Promise<void>;
}

async function withClient(
  url: string,
  use: (client: pg.Client) => Promise<unknown>,
): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await use(client);
  } finally {
    await client.end();
  }
}

/** Options of {@link createDatabase}. */
export interface CreateDatabaseOptions {
  /** A database to copy (`CREATE DATABASE ... TEMPLATE`); none: an empty database. */
  template?: string;
}

/** `name` as a quoted SQL identifier. */
export function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** Creates a database (default name `test_<random hex>`) on the server of `adminUrl`, a URL that may create databases. */
export async function createDatabase(
  adminUrl: string,
  name = `test_${randomBytes(8).toString('hex')}`,
  { template }: CreateDatabaseOptions = {},
): Promise<TestDatabase> {
  const quoted = quoteIdentifier(name);
  const copied = template === undefined ? '' : ` TEMPLATE ${quoteIdentifier(template)}`;
  await withClient(adminUrl, (client) => client.query(`CREATE DATABASE ${quoted}${copied}`));
  const url = new URL(adminUrl);
  url.pathname = `/${encodeURIComponent(name)}`;
  return {
    url: url.toString(),
    name,
    drop: () =>
      withClient(adminUrl, async (client) => {
        await waitForConnectionsToClose(client, name);
        await client.query(`DROP DATABASE IF EXISTS ${quoted} WITH (FORCE)`);
      }),
  };
}

/** How long a drop waits for pools that were just closed to let go of their sockets. */
const CLOSE_GRACE_MS = 2_000;

/**
 * pg pools resolve `end()` before their sockets are gone; terminating those
 * late connections makes their clients emit errors nobody listens to any
 * more. Waiting for them to leave first keeps drops quiet.
 */
export async function waitForConnectionsToClose(client: pg.Client, name: string): Promise<void> {
  const deadline = Date.now() + CLOSE_GRACE_MS;
  while (Date.now() < deadline) {
    const { rows } = await client.query<{ n: number }>(
      'select count(*)::int as n from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()',
      [name],
    );
    if ((rows[0]?.n ?? 0) === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
