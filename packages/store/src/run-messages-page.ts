import type { Kysely } from 'kysely';
import { readHistory, type IndexedMessage } from './run-history.js';
import type { Database } from './schema.js';

/** One page of a run's messages and how many the run has. */
export interface RunMessagesPage {
  /** Messages of the run in all. */
  total: number;
  messages: IndexedMessage[];
}

/**
 * Messages `offset` to `offset + limit - 1` of the run's history, read from
 * the `run_commits` rows that hold them (a page reaching into a fork's shared
 * history reads it through its source). Every stored message advanced the
 * run's committed index, so that is the total.
 */
export async function listRunMessages(
  db: Kysely<Database>,
  runId: string,
  page: { offset: number; limit: number },
): Promise<RunMessagesPage> {
  const [run, messages] = await Promise.all([
    db
      .selectFrom('runs')
      .select('last_checkpoint_at_message_index as total')
      .where('run_id', '=', runId)
      .executeTakeFirst(),
    readHistory(db, runId, { from: page.offset, limit: page.limit }),
  ]);
  return { total: run?.total ?? 0, messages };
}
