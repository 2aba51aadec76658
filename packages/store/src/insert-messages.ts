import type { Kysely } from 'kysely';
import type { Message } from '@cairn/engine';
import type { Database } from './schema.js';

/** Rows per INSERT, well under Postgres' 65535 bind parameters. */
const CHUNK_ROWS = 1000;

/** Inserts `messages` at indices `[start, start + messages.length)` in multi-row INSERTs. */
export async function insertMessages(
  db: Kysely<Database>,
  runId: string,
  start: number,
  messages: readonly Message[],
): Promise<void> {
  for (let offset = 0; offset < messages.length; offset += CHUNK_ROWS) {
    const rows = messages.slice(offset, offset + CHUNK_ROWS).map((message, i) => ({
      run_id: runId,
      idx: start + offset + i,
      message: JSON.stringify(message),
    }));
    await db.insertInto('run_messages').values(rows).execute();
  }
}
