import { afterEach, beforeEach } from 'vitest';
import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { TestDatabase } from '@cairn/services';
import type { Message, ToolCallRecord } from '@cairn/engine';
import type { CheckpointDelta, NewRun } from '@cairn/engine/store';
import { createDb } from '../create-db.js';
import { migrate } from '../migrate.js';
import { PostgresCheckpointStore } from '../postgres-checkpoint-store.js';
import { migratedTestDatabase } from './migrated-test-database.js';
import type { Database } from '../schema.js';

/** Per-test database, Kysely instance and store, migrated; dropped after each test. */
export interface StoreTestContext {
  readonly url: string;
  readonly db: Kysely<Database>;
  readonly store: PostgresCheckpointStore;
}

/** Registers beforeEach/afterEach hooks giving each test a fresh, migrated database. */
export function useStoreTestContext(): StoreTestContext {
  let database: TestDatabase | undefined;
  let db: Kysely<Database> | undefined;
  let store: PostgresCheckpointStore | undefined;
  beforeEach(async () => {
    database = await migratedTestDatabase();
    db = createDb(database.url, { max: 4 });
    await migrate(db);
    store = new PostgresCheckpointStore(db);
  });
  afterEach(async () => {
    await db?.destroy();
    await database?.drop();
    db = store = database = undefined;
  });
  const must = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('store test context used outside a test');
    return value;
  };
  return {
    get url() {
      return must(database).url;
    },
    get db() {
      return must(db);
    },
    get store() {
      return must(store);
    },
  };
}

/** A new agent run for tests. */
export function newRun(overrides: Partial<NewRun> = {}): NewRun {
  return {
    entity: { kind: 'agent', name: 'researcher' },
    input: 'find things',
    checkpoint: 'tool-batch',
    ...overrides,
  };
}

/** A `count`-message history alternating assistant tool calls and tool results. */
export function history(count: number): Message[] {
  return Array.from({ length: count }, (_, i): Message =>
    i === 0
      ? { role: 'user', content: 'find things' }
      : i % 2 === 1
        ? {
            role: 'assistant',
            content: null,
            toolCalls: [{ id: `h${i}`, name: 'slow_search', arguments: '{"query":"x"}' }],
          }
        : { role: 'tool', toolCallId: `h${i - 1}`, name: 'slow_search', content: `result ${i}` },
  );
}

/** A typical tool batch: one assistant turn with three tool calls and their three results (about 2 KB). */
export function batchDelta(batch: number, totalTokens = 100): CheckpointDelta {
  const ids = [1, 2, 3].map((k) => `call_${batch}_${k}`);
  const assistant: Message = {
    role: 'assistant',
    content: null,
    toolCalls: ids.map((id) => ({
      id,
      name: 'slow_fetch_detail',
      arguments: JSON.stringify({ item: `item ${id}` }),
    })),
  };
  const results: Message[] = ids.map((id) => ({
    role: 'tool',
    toolCallId: id,
    name: 'slow_fetch_detail',
    content: `detail of ${id}: ${'lorem ipsum dolor sit amet '.repeat(20)}`,
  }));
  const toolCalls: ToolCallRecord[] = ids.map((id, k) => ({
    toolCallId: id,
    name: 'slow_fetch_detail',
    args: { item: `item ${id}` },
    result: results[k]?.role === 'tool' ? results[k].content : null,
    status: 'completed',
    batch,
    idempotencyKey: `idem-${id}`,
    childRunId: null,
    startedAt: new Date(Date.UTC(2025, 0, 1, 0, 0, batch, k)),
    endedAt: new Date(Date.UTC(2025, 0, 1, 0, 0, batch, k + 500)),
  }));
  return {
    messages: [assistant, ...results],
    toolCalls,
    usage: { inputTokens: totalTokens, outputTokens: 0, totalTokens },
  };
}

const DUMPED_TABLES = [
  'sessions',
  'runs',
  'run_messages',
  'tool_calls',
  'run_attempts',
  'run_events',
] as const;

/** Every row of every store table, in a stable order, for before/after comparisons. */
export async function dumpTables(db: Kysely<Database>): Promise<Record<string, unknown[]>> {
  const dump: Record<string, unknown[]> = {};
  for (const table of DUMPED_TABLES) {
    const { rows } = await sql<{
      row: unknown;
    }>`select to_jsonb(t) as row from ${sql.table(table)} t order by 1`.execute(db);
    dump[table] = rows.map((r) => r.row);
  }
  return dump;
}
