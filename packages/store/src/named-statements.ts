import { createHash } from 'node:crypto';
import type pg from 'pg';

/**
 * Most statements one connection keeps prepared. Past it, a new text is sent
 * unnamed (parsed and planned each time, as before): the run list's filter
 * and sort combinations could otherwise fill a backend's memory with plans.
 */
export const MAX_NAMED_STATEMENTS_PER_CONNECTION = 256;

/** Postgres refuses a prepared statement whose result columns changed since it was prepared (a migration added one). */
const RESULT_TYPE_CHANGED = /cached plan must not change result type/;

type Query = (text: string, values?: unknown[]) => Promise<pg.QueryResult>;

interface NamedQuery {
  (config: pg.QueryConfig): Promise<pg.QueryResult>;
  (text: string, values?: unknown[]): Promise<pg.QueryResult>;
}

/**
 * Makes every parameterized statement a connection sends a named (prepared)
 * statement, named after a hash of its text: Postgres parses and plans it
 * once per connection instead of at every call (half of its time per run on
 * the hot path, docs/benchmarks.md). Statements without parameters (`begin`,
 * DDL, migrations) and cursors are sent as they were.
 *
 * A statement whose result columns changed under it (a migration ran while
 * this process was up) is prepared again under a new name; outside a
 * transaction block it is retried once, inside one the error stands (the
 * block is already aborted) and the next call prepares it afresh.
 */
export function nameStatements(client: pg.PoolClient): void {
  const query = client.query.bind(client) as unknown as NamedQuery;
  const names = new Map<string, string>();
  let inTransactionBlock = false;
  // Each ReadyForQuery says whether the session is inside a transaction block ('T', 'E') or not ('I').
  (client as unknown as { connection: pg.Connection }).connection.on(
    'readyForQuery',
    (message: { status: string }) => {
      inTransactionBlock = message.status !== 'I';
    },
  );

  const nameOf = (hash: string): string | undefined => {
    const known = names.get(hash);
    if (known !== undefined || names.size >= MAX_NAMED_STATEMENTS_PER_CONNECTION) return known;
    const name = `cairn_${hash}`;
    names.set(hash, name);
    return name;
  };

  const named: Query = async (text, values) => {
    const hash = createHash('sha1').update(text).digest('hex').slice(0, 24);
    const name = nameOf(hash);
    if (name === undefined) return query(text, values);
    try {
      return await query({ name, text, values });
    } catch (error) {
      if (!(error instanceof Error) || !RESULT_TYPE_CHANGED.test(error.message)) throw error;
      // The old statement stays on the server until the connection closes; this text moves to a new name.
      const renamed = `${name}_${Date.now().toString(36)}`;
      names.set(hash, renamed);
      if (inTransactionBlock) throw error;
      return query({ name: renamed, text, values });
    }
  };

  const original = client.query;
  client.query = function (this: pg.PoolClient, ...args: unknown[]) {
    const [first, second, third] = args;
    if (
      typeof first === 'string' &&
      Array.isArray(second) &&
      second.length > 0 &&
      third === undefined
    )
      return named(first, second);
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof client.query;
}
