import { readdirSync, readFileSync } from 'node:fs';
import { Engine, type Usage } from '@cairn/engine';
import { RUN_STATE_SCHEMA_VERSION, storedUsageJson } from '@cairn/store';
import { createRegistry } from '@cairn/research-team';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openTestStore, type TestStore } from '../helpers/test-store.js';

/**
 * Tables in foreign-key order (a fixture's `run_messages` rows go in as `run_commits`, below, its
 * `tool_calls` as `tool_call_rows`, and its runs' `usage` in today's form, as the migrations move them).
 */
const TABLES = ['sessions', 'runs', 'run_messages', 'tool_calls', 'run_attempts'] as const;
const JSON_COLUMNS = new Set(['error', 'usage', 'metadata', 'message', 'args']);
const FIXTURES = new URL('../fixtures/', import.meta.url);

let t: TestStore;
beforeEach(async () => {
  t = await openTestStore();
  process.env.RESEARCH_TOOL_DELAY_MS = '10';
  process.env.RESEARCH_MODEL_LATENCY_MS = '0';
});
afterEach(() => t.close());

async function load(
  file: string,
): Promise<{ schema_version: number; tables: Record<string, Record<string, unknown>[]> }> {
  const fixture = JSON.parse(readFileSync(new URL(file, FIXTURES), 'utf8'));
  for (const table of TABLES) {
    const rows = (fixture.tables[table] ?? []).map((row: Record<string, unknown>) =>
      Object.fromEntries(
        Object.entries(row).map(([k, v]) => [
          k,
          k === 'usage' && table === 'runs'
            ? storedUsageJson(v as Usage)
            : JSON_COLUMNS.has(k) && v !== null
              ? JSON.stringify(v)
              : v,
        ]),
      ),
    );
    if (rows.length === 0) continue;
    if (table === 'run_messages') {
      // A message row as today's store holds it: a write of one message (runs hold no events here).
      await t.db
        .insertInto('run_commits')
        .values(
          rows.map((row: Record<string, unknown>) => ({
            run_id: row.run_id as string,
            last_seq: 0,
            end_idx: (row.idx as number) + 1,
            first_seq: 1,
            first_idx: row.idx as number,
            messages: `[${row.message as string}]`,
            events: null,
            ...(row.created_at !== undefined && { created_at: row.created_at as Date }),
          })),
        )
        .execute();
    } else {
      await t.db
        .insertInto(table === 'tool_calls' ? 'tool_call_rows' : table)
        .values(rows as never)
        .execute();
    }
  }
  return fixture;
}

describe('persisted run state of every past schema version still loads and resumes', () => {
  const files = readdirSync(FIXTURES).filter((f) => f.startsWith('schema-v'));

  it('has a fixture for every schema version up to the current one', () => {
    const versions = new Set(files.map((f) => Number(/^schema-v(\d+)-/.exec(f)?.[1])));
    for (let v = 1; v <= RUN_STATE_SCHEMA_VERSION; v++) expect(versions).toContain(v);
  });

  it.each(files)('%s', async (file) => {
    const fixture = await load(file);
    const team = fixture.tables.runs!.find((r) => r.parent_run_id === null)!;
    const runId = team.run_id as string;
    const engine = new Engine({
      store: t.store,
      registry: createRegistry(),
      workerId: 'fixture-test',
    });

    expect((await engine.continueRun(runId)).action).toBe('resume');
    const result = await engine.execute(runId, { reason: 'continue' });
    expect(result.outcome === 'finished' && result.run.status).toBe('COMPLETED');

    const view = (await t.store.getRunView(runId))!;
    expect(view.content).toContain('Detail for result-c');
    const member = view.member_runs[0]!;
    expect(member.tools.map((c) => c.name)).toEqual([
      'slow_search',
      'slow_fetch_detail',
      'slow_fetch_detail',
      'slow_fetch_detail',
    ]);
    const storedBefore = fixture.tables.tool_calls!.map((c) => c.tool_call_id);
    expect(member.tools.slice(0, storedBefore.length).map((c) => c.tool_call_id)).toEqual(
      storedBefore,
    );
  });
});
