import pg from 'pg';
import { setTimeout as sleep } from 'node:timers/promises';

/** Resolves once `SELECT 1` succeeds on `url`; rejects with the last connection error after `timeoutMs`. */
export async function waitForPostgres(url: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.query('SELECT 1');
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
    } finally {
      await client.end().catch(() => undefined);
    }
    await sleep(50);
  }
}
