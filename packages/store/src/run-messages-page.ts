import type { Kysely } from 'kysely';
import type { Message } from '@cairn/engine';
import type { Database } from './schema.js';

/** A message with its position in the run's history. */
export interface IndexedMessage {
  index: number;
  message: Message;
}

/** One page of a run's messages and how many the run has. */
export interface RunMessagesPage {
  /** Messages of the run in all. */
  total: number;
  messages: IndexedMessage[];
}

/** Messages `offset` to `offset + limit - 1` of the run's history, by the primary key (two indexed reads). */
export async function listRunMessages(
  db: Kysely<Database>,
  runId: string,
  page: { offset: number; limit: number },
): Promise<RunMessagesPage> {
  const [count, rows] = await Promise.all([
    db
      .selectFrom('run_messages')
      .select((eb) => eb.fn.countAll<string>().as('total'))
      .where('run_id', '=', runId)
      .executeTakeFirstOrThrow(),
    db
      .selectFrom('run_messages')
      .select(['idx', 'message'])
      .where('run_id', '=', runId)
      .where('idx', '>=', page.offset)
      .orderBy('idx')
      .limit(page.limit)
      .execute(),
  ]);
  return {
    total: Number(count.total),
    messages: rows.map((r) => ({ index: r.idx, message: r.message })),
  };
}
