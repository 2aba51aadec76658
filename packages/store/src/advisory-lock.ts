import { sql } from 'kysely';
import type { Kysely } from 'kysely';

/** Advisory lock keys of the store's single-runner jobs (one 64-bit key each, in `pg_try_advisory_lock`). */
export const ADVISORY_LOCKS = {
  /** Held while finished runs are pruned: one worker at a time. */
  retention: 0x636169726e01n,
  /** Held while orphaned runs are reconciled: one worker at a time. */
  reconciler: 0x636169726e02n,
  /** Held while the run list's search chunks are closed and merged: one worker at a time. */
  searchChunks: 0x636169726e03n,
} as const;

/** The result of {@link withAdvisoryLock}: `locked: false` when another session holds the lock (nothing ran). */
export type AdvisoryLockResult<T> = { locked: true; result: T } | { locked: false };

/**
 * Runs `work` on one connection while holding the session advisory lock `key`, if it is free; when
 * another session holds it, returns `{ locked: false }` at once. The lock is released after `work`,
 * and by Postgres itself if the process dies.
 */
export function withAdvisoryLock<DB, T>(
  db: Kysely<DB>,
  key: bigint,
  work: (connection: Kysely<DB>) => Promise<T>,
): Promise<AdvisoryLockResult<T>> {
  return db.connection().execute(async (connection) => {
    const { rows } = await sql<{
      locked: boolean;
    }>`select pg_try_advisory_lock(${key.toString()}::bigint) as locked`.execute(connection);
    if (!rows[0]?.locked) return { locked: false };
    try {
      return { locked: true, result: await work(connection) };
    } finally {
      await sql`select pg_advisory_unlock(${key.toString()}::bigint)`.execute(connection);
    }
  });
}
