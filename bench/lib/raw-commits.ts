import type pg from 'pg';

/** Creates `bare_messages`: one jsonb column, no key, no index: the floor for durable bytes. */
export async function createBareTable(pool: pg.Pool): Promise<void> {
  await pool.query('CREATE TABLE IF NOT EXISTS bare_messages (body jsonb NOT NULL)');
}

function valuesList(count: number): string {
  return Array.from({ length: count }, (_, i) => `($${i + 1}::jsonb)`).join(', ');
}

/** The physical limit: BEGIN; one multi-row INSERT of `rows` (JSON texts); COMMIT (3 round trips). */
export async function rawTransaction(pool: pg.Pool, rows: readonly string[]): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query(`INSERT INTO bare_messages (body) VALUES ${valuesList(rows.length)}`, [
      ...rows,
    ]);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

/** The same INSERT as one autocommitted statement (1 round trip). */
export async function rawStatement(pool: pg.Pool, rows: readonly string[]): Promise<void> {
  await pool.query(`INSERT INTO bare_messages (body) VALUES ${valuesList(rows.length)}`, [...rows]);
}
