import pg from 'pg';
import type { ClockBook } from './clock-book.js';

/**
 * The clocks of a queue in its Postgres schema: `cairn_fair_clocks` (a
 * tenant's clock) and `cairn_fair_last_slot` (the largest slot given), both
 * unlogged: an enqueue writes no WAL for them, and a crash that empties them
 * only starts the tenants again at the fleet's time. Each move is one
 * statement (a compare-and-set).
 */
export async function openPostgresClockBook(options: {
  url: string;
  schema: string;
  queueName: string;
}): Promise<ClockBook> {
  const schema = pg.escapeIdentifier(options.schema);
  const clocks = `${schema}.cairn_fair_clocks`;
  const last = `${schema}.cairn_fair_last_slot`;
  const pool = new pg.Pool({ connectionString: options.url, max: 2 });
  pool.on('error', () => undefined);
  const query = <R extends pg.QueryResultRow>(text: string, values: unknown[] = []) =>
    pool.query<R>(text, values);
  for (const create of [
    `create unlogged table if not exists ${clocks} (
      queue text not null, tenant text not null, clock text not null, primary key (queue, tenant))`,
    `create unlogged table if not exists ${last} (queue text primary key, slot float8 not null)`,
  ]) {
    // A concurrent `create table if not exists` can fail on the type's name: the table is there then.
    await query(create).catch(() => query(create));
  }
  const queue = options.queueName;
  const raise = `raised as (
      insert into ${last} (queue, slot) select $1, $4 from moved
      on conflict (queue) do update set slot = greatest(${last}.slot, excluded.slot))`;
  return {
    read: async (tenant) => {
      // BullMQ's table of jobs: a waiting job with a priority above 0 is a prioritized one.
      const { rows } = await query<{
        clock: string | null;
        slot: number | null;
        first: number | null;
      }>(
        `select (select clock from ${clocks} where queue = $1 and tenant = $2) as clock,
                (select slot from ${last} where queue = $1) as slot,
                (select priority from ${schema}.job where queue = $1 and state = 'waiting'
                   and priority > 0 order by priority limit 1) as first`,
        [queue, tenant],
      );
      const row = rows[0];
      return {
        clock: row?.clock ?? undefined,
        lastSlot: row?.slot ?? undefined,
        firstWaitingPriority: row?.first ?? undefined,
      };
    },
    swap: async (tenant, expected, next, slot) => {
      const moved =
        expected === undefined
          ? `insert into ${clocks} (queue, tenant, clock) values ($1, $2, $3)
             on conflict do nothing returning 1`
          : `update ${clocks} set clock = $3 where queue = $1 and tenant = $2 and clock = $5
             returning 1`;
      const { rows } = await query<{ moved: number }>(
        `with moved as (${moved}), ${raise} select count(*)::int as moved from moved`,
        [queue, tenant, next, slot, ...(expected === undefined ? [] : [expected])],
      );
      return rows[0]?.moved === 1;
    },
    clear: async (lastSlot) => {
      await query(
        `with cleared as (delete from ${last} where queue = $1 and slot = $2 returning 1)
         delete from ${clocks} where queue = $1 and exists (select 1 from cleared)`,
        [queue, lastSlot],
      );
    },
    close: () => pool.end(),
  };
}
