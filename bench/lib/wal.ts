/** Anything that runs a query: a pg Client or Pool. */
export interface Queryable {
  query(sql: string): Promise<{ rows: Record<string, unknown>[] }>;
}

/** Parses a pg_lsn text (`16/B374D848`) into a byte position. */
export function lsnToBigInt(lsn: string): bigint {
  const [hi = '0', lo = '0'] = lsn.split('/');
  return (BigInt(`0x${hi}`) << 32n) + BigInt(`0x${lo}`);
}

/** The server's current WAL insert position (cluster-wide: measure with nothing else writing). */
export async function walPosition(db: Queryable): Promise<bigint> {
  const { rows } = await db.query('SELECT pg_current_wal_insert_lsn()::text AS lsn');
  return lsnToBigInt(String(rows[0]?.lsn));
}

/** WAL bytes written while `work` runs, read before and after on `db` (another connection than `work` uses). */
export async function walBytesOf<T>(
  db: Queryable,
  work: () => Promise<T>,
): Promise<{ bytes: number; result: T }> {
  const before = await walPosition(db);
  const result = await work();
  const after = await walPosition(db);
  return { bytes: Number(after - before), result };
}

/** The next transaction id the server will assign: its difference across some work counts the write transactions in it. */
export async function nextXid(db: Queryable): Promise<number> {
  const { rows } = await db.query('SELECT pg_snapshot_xmax(pg_current_snapshot())::text AS x');
  return Number(rows[0]?.x);
}

/** A byte position as pg_lsn text (`16/B374D848`). */
export function lsnText(lsn: bigint): string {
  return `${(lsn >> 32n).toString(16)}/${(lsn & 0xffffffffn).toString(16)}`;
}

/**
 * Bytes of full-page images in the WAL between two positions, via pg_walinspect
 * (PostgreSQL 15+, superuser); undefined when the extension is not available.
 */
export async function fullPageImageBytes(
  db: Queryable,
  start: bigint,
  end: bigint,
): Promise<number | undefined> {
  try {
    await db.query('CREATE EXTENSION IF NOT EXISTS pg_walinspect');
    const { rows } = await db.query(
      `SELECT coalesce(sum(fpi_length), 0)::text AS fpi FROM pg_get_wal_records_info('${lsnText(start)}', '${lsnText(end)}')`,
    );
    return Number(rows[0]?.fpi);
  } catch {
    return undefined;
  }
}
