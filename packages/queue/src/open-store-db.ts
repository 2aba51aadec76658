import { assertMigrated, createDb, migrate } from '@cairn/store';
import { ServiceUnreachableError } from './errors.js';

/** The store's database handle, as `createDb` returns it. */
export type StoreDb = ReturnType<typeof createDb>;

/** What {@link openStoreDb} takes. */
export interface OpenStoreDbOptions {
  /** Apply the store's migrations (`CAIRN_MIGRATE=1`); otherwise only check that none is pending. */
  migrate: boolean;
  /** Maximum connections in the pool. @defaultValue createDb's default */
  max?: number;
}

/** Error codes that mean Postgres could not be reached or would not let us in (not a problem of the schema). */
const CONNECTION_ERROR_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'ETIMEDOUT',
  'EAI_AGAIN',
  '3D000', // database does not exist
  '28P01', // password authentication failed
  '28000', // invalid authorization
  '57P03', // the database system is starting up
]);

/**
 * Opens the store's database for a producer or a worker at start-up and makes
 * sure its schema is this build's: migrates when `options.migrate`, else checks.
 * Throws `ServiceUnreachableError` when Postgres cannot be reached, and
 * `StoreNotMigratedError` (which names `npm run migrate`) when migrations are
 * pending; the pool is closed before either is thrown.
 *
 * @example
 * const db = await openStoreDb(config.databaseUrl, { migrate: config.migrate });
 */
export async function openStoreDb(databaseUrl: string, options: OpenStoreDbOptions): Promise<StoreDb> {
  const db = createDb(databaseUrl, options.max === undefined ? {} : { max: options.max });
  try {
    await (options.migrate ? migrate(db) : assertMigrated(db));
    return db;
  } catch (cause) {
    await db.destroy();
    if (isConnectionError(cause)) throw new ServiceUnreachableError('Postgres', databaseUrl, { cause });
    throw cause;
  }
}

/** True when the error, or one of its causes (a failed migration wraps it), is a connection failure. */
function isConnectionError(error: unknown): boolean {
  for (let current = error, depth = 0; current !== undefined && depth < 5; depth++) {
    const code = (current as { code?: unknown } | null)?.code;
    if (typeof code === 'string' && CONNECTION_ERROR_CODES.has(code)) return true;
    current = (current as { cause?: unknown } | null)?.cause;
  }
  return false;
}
