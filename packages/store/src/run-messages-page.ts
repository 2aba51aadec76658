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
 * Messages `offset` to `offset + limit - 1` of the run's history (a fork's
 * first ones read through its source), by the primary key.
 */
export async function listRunMessages(
  db: Kysely<Database>,
  runId: string,
  page: { offset: number; limit: number },
): Promise<RunMessagesPage> {
  const [count, messages] = await Promise.all([
    db
      .selectFrom('runs')
      .select((eb) => [
        eb.fn.coalesce('shared_history_length', eb.lit(0)).as('shared'),
        eb
          .selectFrom('run_messages')
          .select((m) => m.fn.countAll<string>().as('own'))
          .whereRef('run_messages.run_id', '=', 'runs.run_id')
          .as('own'),
      ])
      .where('run_id', '=', runId)
      .executeTakeFirst(),
    readHistory(db, runId, { from: page.offset, limit: page.limit }),
  ]);
  return {
    total: Number(count?.shared ?? 0) + Number(count?.own ?? 0),
    messages,
  };
}
