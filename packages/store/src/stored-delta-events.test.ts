import { Migrator, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  Agent,
  Engine,
  LIVE_EVENT_TYPES,
  Registry,
  tool,
  type RunEvent,
  type ToolCallRecord,
} from '@cairn/engine';
import { ScriptedModel } from '@cairn/engine/testing';
import { MIGRATIONS } from './migrate.js';
import type { StoredEvent } from './run-events.js';
import { newRun, useStoreTestContext } from './test-support/store-test-context.js';

const ctx = useStoreTestContext();

const LIVE: readonly string[] = LIVE_EVENT_TYPES;

/** A run of 3 tool batches of 3 calls, then an answer, checkpointed after each batch; returns its id and the events it published. */
async function threeBatchRun(): Promise<{ runId: string; published: RunEvent[] }> {
  const noop = tool({
    name: 'noop',
    description: 'Does nothing',
    parameters: z.object({ i: z.number() }),
    execute: () => 'ok',
  });
  const model = new ScriptedModel({
    decide: ({ turn }) =>
      turn < 3
        ? { toolCalls: [1, 2, 3].map((i) => ({ name: 'noop', arguments: { i } })) }
        : { text: 'done' },
  });
  const registry = new Registry({ agents: [new Agent({ name: 'batcher', model, tools: [noop] })] });
  const published: RunEvent[] = [];
  const engine = new Engine({
    store: ctx.store,
    registry,
    onEvent: (event) => {
      if (!LIVE.includes(event.type)) published.push(event);
    },
  });
  const { runId } = await engine.createRun({
    entity: { kind: 'agent', name: 'batcher' },
    input: 'go',
    checkpoint: 'tool-batch',
  });
  const result = await engine.execute(runId, { reason: 'run' });
  expect(result.outcome === 'finished' && result.run.status).toBe('COMPLETED');
  return { runId, published };
}

/** A run holding `runId`'s batches as the writer stored them before derived events were compact: every event whole. */
async function twinStoredWhole(runId: string, published: readonly RunEvent[]): Promise<string> {
  const twin = await ctx.store.createRun(newRun());
  const whole = published.map((e) => ({
    type: e.type,
    data: { ...e.data, epoch: e.epoch, at: e.at },
  }));
  const { rows } = await sql<{ last_seq: number; end_idx: number; first_seq: number; at: Date }>`
    select last_seq, end_idx, first_seq, created_at as at
      from run_commits where run_id = ${runId} and events is not null`.execute(ctx.db);
  for (const row of rows) {
    await sql`
      insert into run_commits (run_id, last_seq, end_idx, first_seq, first_idx, events, created_at)
      values (${twin.runId}, ${row.last_seq}, ${row.end_idx}, ${row.first_seq}, ${row.end_idx},
              ${JSON.stringify(whole.slice(row.first_seq - 1, row.last_seq))}, ${row.at})`.execute(
      ctx.db,
    );
  }
  await sql`update runs set event_seq = ${published.length} where run_id = ${twin.runId}`.execute(
    ctx.db,
  );
  return twin.runId;
}

/** What the events API sends of each event: its seq, type and data as JSON text. */
const wire = (events: readonly StoredEvent[]) =>
  events.map((e) => `${e.seq} ${e.type} ${JSON.stringify(e.data)}`);

async function storedBytes(runId: string): Promise<number> {
  const { rows } = await sql<{ bytes: number }>`
    select sum(pg_column_size(events))::int as bytes from run_commits where run_id = ${runId}`.execute(
    ctx.db,
  );
  return rows[0]!.bytes;
}

describe('derived events', () => {
  it("store a 3-batch run's events in a third fewer bytes and read back exactly as they were stored whole", async () => {
    const { runId, published } = await threeBatchRun();
    const derived = published.filter((e) =>
      ['ToolCallStarted', 'ToolCallCompleted', 'CheckpointCommitted'].includes(e.type),
    );
    expect([published.length, derived.length]).toEqual([31, 21]);

    // What the run published, numbered from 1, as the writer stored it whole before.
    const events = await ctx.store.listEvents(runId);
    expect(events.map((e) => ({ seq: e.seq, type: e.type, data: e.data }))).toEqual(
      published.map((e, i) => ({
        seq: i + 1,
        type: e.type,
        data: { ...e.data, epoch: e.epoch, at: e.at },
      })),
    );

    // The same events stored whole read the same, byte for byte, from every cursor and by type.
    const twin = await twinStoredWhole(runId, published);
    expect(wire(await ctx.store.listEvents(twin))).toEqual(wire(events));
    for (const after of [0, 3, 9, 10, 17, 30]) {
      for (const limit of [1, 4, undefined]) {
        expect(wire(await ctx.store.listEvents(runId, after, limit))).toEqual(
          wire(await ctx.store.listEvents(twin, after, limit)),
        );
      }
    }
    const types = ['ToolCallStarted', 'ToolCallCompleted', 'CheckpointCommitted', 'RunCompleted'];
    expect(wire(await ctx.store.listEventsOfTypes(runId, types))).toEqual(
      wire(await ctx.store.listEventsOfTypes(twin, types)),
    );

    const [compact, whole] = [await storedBytes(runId), await storedBytes(twin)];
    // Measured 2,876 B against 4,935 B: a tool batch's row 563 B against 1,687 B; the first
    // batch, no longer over the ~2 KB at which Postgres compresses, 847 B against 659 B.
    expect(compact).toBeLessThan(whole * 0.65);
  });

  it('stores whole a derived event with other data, a tool name holding a colon, and a batch’s first; the rest compact, with or without a call row', async () => {
    const { runId } = await ctx.store.createRun(newRun());
    const { epoch } = await ctx.store.claimRun(runId, { workerId: 'w1', reason: 'run' });
    const at = (ms: number) => new Date(Date.UTC(2026, 11, 1, 10, 0, 0, ms)).toISOString();
    const event = (
      type: RunEvent['type'],
      data: Record<string, unknown>,
      ms: number,
    ): RunEvent => ({
      type,
      runId,
      epoch,
      data,
      at: at(ms),
    });
    const call: ToolCallRecord = {
      toolCallId: 'call_a',
      name: 'noop',
      args: {},
      result: 'ok',
      status: 'completed',
      batch: 1,
      idempotencyKey: 'k-a',
      childRunId: null,
      startedAt: new Date(at(5)),
      endedAt: new Date(at(9)),
    };
    const events = [
      event('ToolCallStarted', { toolCallId: 'call_a', name: 'noop', batch: 1 }, 0),
      event('ToolCallStarted', { toolCallId: 'call_b', name: 'noop', batch: 1 }, 3),
      event('ToolCallStarted', { toolCallId: 'call_a', name: 'noop', batch: 1 }, 1_005),
      event('ToolCallCompleted', { toolCallId: 'call_a', name: 'ns:tool', batch: 1 }, 7),
      event('ToolCallCompleted', { toolCallId: 'call_a', name: 'noop', batch: 1, x: 1 }, 8),
      event('ToolCallCompleted', { toolCallId: 'call_a', name: 'noop', batch: 1 }, 9),
      event('CheckpointCommitted', { lastCheckpointAtMessageIndex: 0, messages: 0 }, -2),
    ];
    await ctx.store.commitCheckpoint(runId, epoch, {
      messages: [],
      toolCalls: [call],
      usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
      events,
    });

    const { rows } = await sql<{ kind: string }>`
      select json_typeof(e) as kind from run_commits b, json_array_elements(b.events) e
       where b.run_id = ${runId}`.execute(ctx.db);
    expect(rows.map((r) => r.kind)).toEqual([
      'object', // first: every batch's first event is whole
      'string', // call_b: no row, read from the string alone
      'string',
      'object', // a name with a colon
      'object', // a field the compact form does not hold
      'string',
      'string',
    ]);
    expect(
      (await ctx.store.listEvents(runId)).map((e) => ({ seq: e.seq, type: e.type, data: e.data })),
    ).toEqual(
      events.map((e, i) => ({
        seq: i + 1,
        type: e.type,
        data: { ...e.data, epoch, at: e.at },
      })),
    );
  });

  it('are stored whole again when the migration is reverted', async () => {
    const { runId, published } = await threeBatchRun();
    const before = (await ctx.store.listEvents(runId)).map((e) => ({
      seq: e.seq,
      type: e.type,
      data: e.data,
    }));
    const { error, results } = await new Migrator({
      db: ctx.db,
      provider: { getMigrations: () => Promise.resolve({ ...MIGRATIONS }) },
      allowUnorderedMigrations: true,
    }).migrateTo('0017_lean_writes');
    expect(error).toBeUndefined();
    expect(results?.map((r) => r.migrationName)).toContain('0018_derived_events');
    const { rows } = await sql<{ n: number }>`
      select count(*)::int as n from run_event_batches b, jsonb_array_elements(b.events) e
       where jsonb_typeof(e) = 'string'`.execute(ctx.db);
    expect(rows[0]!.n).toBe(0);
    // Read as that schema's view gives them (the store's readers read today's rows).
    const { rows: after } = await sql<{ seq: number; type: string; data: unknown }>`
      select seq, type, data from run_events where run_id = ${runId} order by seq`.execute(ctx.db);
    expect(after).toEqual(before);
    expect(before).toHaveLength(published.length);
  });
});
