import { assertMigrated, createDb, isPostgresUnavailable, migrate } from '@cairn/store';
import { ServiceUnreachableError } from './errors.js';

/** The store's database handle, as `createDb` returns it. */
export type StoreDb = ReturnType<typeof createDb>;

/** What {@link openStoreDb} takes. */
export interface OpenStoreDbOptions {
  /** Apply the store's migrations (`CAIRN_MIGRATE=1`); otherwise only check that none is pending. */
  migrate: boolean;
  /** Maximum connections in the pool. @defaultValue createDb's default */
  max?: number;
  /** `CAIRN_PG_NAMED_STATEMENTS`: see `createDb`'s option. @defaultValue true */
  namedStatements?: boolean;
}

/**
 * Opens the store's database for a producer or a worker at start-up and makes
 * sure its schema is this build's: migrates when `options.migrate`, else checks.
 * Its pool never closes an idle connection (`idleTimeoutMs: 0`).
 * Throws `ServiceUnreachableError` when Postgres cannot be reached, and
 * `StoreNotMigratedError` (which names `npm run migrate`) when migrations are
 * pending; the pool is closed before either is thrown.
 *
 * @example
 * const db = await openStoreDb(config.databaseUrl, { migrate: config.migrate });
 */
export async function openStoreDb(
  databaseUrl: string,
  options: OpenStoreDbOptions,
): Promise<StoreDb> {
  // A long-lived process keeps its connections: a page loaded after a quiet minute reads as fast as the last one.
  const db = createDb(databaseUrl, {
    idleTimeoutMs: 0,
    ...(options.max === undefined ? {} : { max: options.max }),
    ...(options.namedStatements === undefined ? {} : { namedStatements: options.namedStatements }),
  });
  try {
    await (options.migrate ? migrate(db) : assertMigrated(db));
    return db;
  } catch (cause) {
    await db.destroy();
    // A failed migration wraps the connection error: its causes are looked at too.
    if (isPostgresUnavailable(cause))
      throw new ServiceUnreachableError('Postgres', databaseUrl, { cause });
    throw cause;
  }
}
