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
 * Messages `offset` to `offset + limit - 1` of the run's history by the
 * primary key (a page reaching into a fork's shared history reads it through
 * its source).
 */
export async function listRunMessages(
  db: Kysely<Database>,
  runId: string,
  page: { offset: number; limit: number },
): Promise<RunMessagesPage> {
  const [count, own] = await Promise.all([
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
    db
      .selectFrom('run_messages')
      .select(['idx as index', 'message'])
      .where('run_id', '=', runId)
      .where('idx', '>=', page.offset)
      .orderBy('idx')
      .limit(page.limit)
      .execute(),
  ]);
  const shared = Number(count?.shared ?? 0);
  return {
    total: shared + Number(count?.own ?? 0),
    // A page that reaches into a fork's shared history reads it through its source.
    messages:
      page.offset < shared
        ? await readHistory(db, runId, { from: page.offset, limit: page.limit })
        : own,
  };
}
