import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { nameStatements } from './named-statements.js';
import type { Database } from './schema.js';

/** Options of {@link createDb}. */
export interface CreateDbOptions {
  /**
   * Maximum connections in the pool.
   * @defaultValue 10
   */
  max?: number;
  /**
   * Told when a pooled connection dies (server restart, dropped database),
   * idle or checked out. The pool replaces it and the query in flight fails;
   * without a listener pg would crash the process.
   * @defaultValue ignore
   */
  onIdleError?: (error: Error) => void;
  /**
   * Postgres ends a session whose transaction sits idle this long
   * (`idle_in_transaction_session_timeout`). A process frozen mid-transaction
   * (SIGSTOP, a long GC pause, a suspended VM) would otherwise keep its row
   * locks, and block every other worker's claim of its run, for as long as it
   * stays frozen. The store's transactions never wait on anything but Postgres.
   * @defaultValue 10000
   */
  idleInTransactionTimeoutMs?: number;
  /**
   * An idle pooled connection is closed after this long; 0 keeps it open. A
   * closed one costs the next read a new connection and a fresh backend with
   * cold caches: tens of ms each on a busy machine (docs/benchmarks.md, `pages`).
   * @defaultValue 10000 (pg's)
   */
  idleTimeoutMs?: number;
  /**
   * Send parameterized statements as named (prepared) statements, planned once
   * per connection (docs/operations.md, "Postgres"). Turn off behind a pooler
   * that cannot keep them (PgBouncer before 1.21 in transaction mode).
   * @defaultValue true
   */
  namedStatements?: boolean;
}

/** Default of {@link CreateDbOptions.idleInTransactionTimeoutMs}. */
export const DEFAULT_IDLE_IN_TRANSACTION_TIMEOUT_MS = 10_000;

const INT8_OID = 20;

/** Parses int8 (count(*), sums) as numbers: every int8 the store reads stays far below 2^53. */
const TYPES: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID && format !== 'binary'
      ? Number
      : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

/**
 * A Kysely instance on a pg pool for the store's database; `destroy()` it to close the pool.
 *
 * @example
 * const db = createDb(process.env.DATABASE_URL!);
 * const store = new PostgresCheckpointStore(db);
 */
export function createDb(url: string, options: CreateDbOptions = {}): Kysely<Database> {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max ?? 10,
    idleTimeoutMillis: options.idleTimeoutMs ?? 10_000,
    types: TYPES,
    idle_in_transaction_session_timeout:
      options.idleInTransactionTimeoutMs ?? DEFAULT_IDLE_IN_TRANSACTION_TIMEOUT_MS,
  });
  const onError = options.onIdleError ?? (() => undefined);
  pool.on('error', onError);
  // pg-pool listens only while a client is idle: a connection killed mid-transaction would emit an unhandled 'error'.
  pool.on('connect', (client) => {
    client.on('error', onError);
    if (options.namedStatements ?? true) nameStatements(client);
  });
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
}
