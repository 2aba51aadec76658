import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sql, type Kysely } from 'kysely';
import { testDatabase, type TestDatabase } from '@cairn/services';
import { createDb } from './create-db.js';
import { migrate } from './migrate.js';
import { PostgresCheckpointStore } from './postgres-checkpoint-store.js';
import type { Database } from './schema.js';
import { batchDelta, newRun } from './test-support/store-test-context.js';

let database: TestDatabase;
let db: Kysely<Database>;
let store: PostgresCheckpointStore;

beforeEach(async () => {
  database = await testDatabase();
  // One connection: every statement below runs in the session whose prepared statements are read.
  db = createDb(database.url, { max: 1 });
  await migrate(db);
  store = new PostgresCheckpointStore(db);
});

afterEach(async () => {
  await db.destroy();
  await database.drop();
});

/** A run through its whole hot path: create, claim, three checkpoints, finish. */
async function runOnce(): Promise<string> {
  const run = await store.createRun(newRun());
  const { epoch } = await store.claimRun(run.runId, { workerId: 'w1', reason: 'run' });
  for (const batch of [1, 2, 3]) await store.commitCheckpoint(run.runId, epoch, batchDelta(batch));
  await store.finishRun(run.runId, epoch, {
    status: 'COMPLETED',
    content: 'done',
    error: null,
    delta: {
      messages: [{ role: 'assistant', content: 'done' }],
      toolCalls: [],
      usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 },
    },
  });
  return run.runId;
}

interface Prepared {
  name: string;
  statement: string;
  parameters: number;
  calls: number;
}

async function preparedStatements(): Promise<Prepared[]> {
  const { rows } = await sql<Prepared>`
    select name, statement, cardinality(parameter_types) as parameters,
           generic_plans + custom_plans as calls
    from pg_prepared_statements where name like 'cairn\\_%'`.execute(db);
  return rows;
}

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

function scansOf(node: PlanNode): string[] {
  const own =
    node['Node Type'].endsWith('Scan') && node['Relation Name']
      ? [`${node['Node Type']} ${node['Index Name'] ?? node['Relation Name']}`]
      : [];
  return [...own, ...(node.Plans ?? []).flatMap(scansOf)];
}

describe('named statements', () => {
  it('prepares each hot-path statement once and runs it again without parsing', async () => {
    await runOnce();
    await runOnce();
    const prepared = await preparedStatements();
    const writesTo = (table: string) =>
      prepared.filter((p) =>
        new RegExp(`(insert into|update) "?${table}"?\\b`, 'i').test(p.statement),
      );
    // Create, claim, checkpoints and finish all write runs; creates and checkpoints also write commits.
    expect(writesTo('runs').length).toBeGreaterThanOrEqual(3);
    expect(writesTo('run_commits').length).toBeGreaterThanOrEqual(1);
    // The second run reused the first run's statements: each name ran more than once.
    const checkpoint = writesTo('run_commits')[0]!;
    expect(checkpoint.calls).toBeGreaterThanOrEqual(2);
    expect(new Set(prepared.map((p) => p.statement)).size).toBe(prepared.length);
  });

  it('keeps generic plans of the hot path on keys, never a scan of a whole run table', async () => {
    await runOnce();
    // 3,000 copies of that run in every table a run writes, analyzed, so that plans are priced on
    // tables of production's shape; statements have run fewer than six times, so none is cached yet.
    await sql`do $$ declare t text; columns text; begin
      foreach t in array array['runs', 'run_commits', 'tool_call_rows', 'run_attempts'] loop
        select string_agg(quote_ident(column_name), ', ') into columns
          from information_schema.columns
          where table_schema = current_schema() and table_name = t
            and is_generated = 'NEVER' and column_name <> 'run_id'
            and (t <> 'runs' or column_name <> 'status');
        execute format('insert into %I (run_id, %s%s) select ''bulk-'' || g, %s%s from %s, generate_series(1, 3000) g',
          t, case when t = 'runs' then 'status, ' else '' end, columns,
          case when t = 'runs' then '(array[''RUNNING'', ''COMPLETED'', ''PAUSED''])[g % 3 + 1], ' else '' end,
          -- Calls stored running have rows of their own: copied from every call the run made.
          columns, case when t = 'tool_call_rows' then '(select distinct on (tool_call_id) * from tool_calls) c'
                        else quote_ident(t) end);
      end loop;
      insert into run_continue_requests (run_id, input, applied_epoch, applied_at)
        select 'bulk-' || g, 'more', 1, now() from generate_series(1, 3000) g;
    end $$`.execute(db);
    await sql`analyze`.execute(db);
    await sql`set plan_cache_mode = force_generic_plan`.execute(db);
    const seqScans: string[] = [];
    const prepared = (await preparedStatements()).filter(
      (p) => !/kysely_migration|pg_attribute/.test(p.statement),
    );
    // Create (one statement), claim, checkpoint and finish at least.
    expect(prepared.length).toBeGreaterThanOrEqual(4);
    for (const p of prepared) {
      const args = Array.from({ length: p.parameters }, () => 'null').join(', ');
      const { rows } = await sql<{
        'QUERY PLAN': [{ Plan: PlanNode }];
      }>`explain (format json) execute ${sql.raw(
        p.name,
      )}${sql.raw(args ? `(${args})` : '')}`.execute(db);
      const scans = scansOf(rows[0]!['QUERY PLAN'][0].Plan);
      for (const scan of scans)
        if (scan.startsWith('Seq Scan'))
          seqScans.push(`${scan} in ${p.statement.replace(/\s+/g, ' ').slice(0, 80)}`);
    }
    expect(seqScans).toEqual([]);
  });

  it('survives a migration that changes a prepared statement’s result columns', async () => {
    await sql`create table probe (id int primary key, label text)`.execute(db);
    await sql`insert into probe values (1, 'one')`.execute(db);
    const read = () => sql<{ id: number }>`select * from probe where id = ${1}`.execute(db);
    expect((await read()).rows).toEqual([{ id: 1, label: 'one' }]);
    await sql`alter table probe add column extra int`.execute(db);
    expect((await read()).rows).toEqual([{ id: 1, label: 'one', extra: null }]);
    // Inside a transaction block the statement fails once (the block is aborted), then works again.
    await sql`alter table probe add column more int`.execute(db);
    await expect(
      db.transaction().execute((trx) => sql`select * from probe where id = ${1}`.execute(trx)),
    ).rejects.toThrow(/cached plan must not change result type/);
    expect((await read()).rows).toEqual([{ id: 1, label: 'one', extra: null, more: null }]);
  });

  it('sends statements unnamed when the pool is told not to name them', async () => {
    await db.destroy();
    db = createDb(database.url, { max: 1, namedStatements: false });
    store = new PostgresCheckpointStore(db);
    await runOnce();
    expect(await preparedStatements()).toEqual([]);
  });
});
