import { describe, expect, it } from 'vitest';
import { Migrator, sql } from 'kysely';
import type { CheckpointDelta } from '@cairn/engine/store';
import { MIGRATIONS } from './migrate.js';
import { batchDelta, newRun, useStoreTestContext } from './test-support/store-test-context.js';

const ctx = useStoreTestContext();

interface StoredRow {
  values: number;
  stored: number;
  messages_compressed: string | null;
  calls_compressed: string | null;
  pad: number | null;
}

/** Each `run_commits` row of the run: its values' text length against what the row takes stored. */
async function storedRows(runId: string): Promise<StoredRow[]> {
  const { rows } = await sql<StoredRow>`
    select coalesce(octet_length(messages::text), 0) + coalesce(octet_length(events::text), 0)
             + coalesce(octet_length(calls::text), 0) as values,
           pg_column_size(c.*) as stored,
           pg_column_compression(messages) as messages_compressed,
           pg_column_compression(calls) as calls_compressed,
           octet_length(pad) as pad
      from run_commits c where run_id = ${runId} order by last_seq, end_idx`.execute(ctx.db);
  return rows;
}

/** A tool batch of about 1.3 KB of values: under the ~2 KB at which Postgres compresses a row unaided. */
function smallBatch(): CheckpointDelta {
  const delta = batchDelta(1);
  return {
    ...delta,
    messages: delta.messages.map((m) =>
      m.role === 'tool' ? { ...m, content: m.content.slice(0, 120) } : m,
    ),
    toolCalls: delta.toolCalls.map((c) => ({ ...c, result: c.result?.slice(0, 120) ?? null })),
  };
}

describe('run_commits rows, compressed', () => {
  it('stores a write under 2 KB compressed, its messages and calls, and reads back what was written', async () => {
    const { runId } = await ctx.store.createRun(newRun());
    const { epoch } = await ctx.store.claimRun(runId, { workerId: 'w1', reason: 'run' });
    const delta = smallBatch();
    await ctx.store.commitCheckpoint(runId, epoch, delta);

    const [batch] = await storedRows(runId);
    expect(batch!.values).toBeGreaterThan(1_000);
    expect(batch!.values).toBeLessThan(2_000);
    expect(batch!.messages_compressed).not.toBeNull();
    expect(batch!.calls_compressed).not.toBeNull();
    // The padding compresses to a few bytes: the row takes less than its values' text did.
    expect(batch!.pad).toBeGreaterThan(0);
    expect(batch!.stored).toBeLessThan(batch!.values * 0.8);

    const history = await ctx.store.loadHistory(runId);
    expect(history.messages).toEqual(delta.messages);
    const { rows: viewed } = await sql<{ message: unknown }>`
      select message from run_messages where run_id = ${runId} order by idx`.execute(ctx.db);
    expect(viewed.map((r) => r.message)).toEqual(delta.messages);
    expect(history.toolCalls.map((c) => [c.toolCallId, c.status, c.result])).toEqual(
      delta.toolCalls.map((c) => [c.toolCallId, 'completed', c.result]),
    );
  });

  it('leaves a small write as it is: a fork’s create row of one message, unpadded', async () => {
    const { runId } = await ctx.store.createRun(
      newRun({ messages: [{ role: 'user', content: 'find things, again' }] }),
    );
    const [created] = await storedRows(runId);
    expect(created!.pad).toBeNull();
    expect(created!.messages_compressed).toBeNull();
  });

  it('stores a call without what its row says elsewhere, and every reader gives it whole', async () => {
    const { runId } = await ctx.store.createRun(newRun());
    const { epoch } = await ctx.store.claimRun(runId, { workerId: 'w1', reason: 'run' });
    const delta = batchDelta(1);
    // The model's arguments text as it came (spaced): the call's args are what it parses to.
    const [assistant, ...results] = delta.messages;
    const spaced = {
      ...assistant!,
      toolCalls: (
        assistant as { toolCalls: { id: string; name: string; arguments: string }[] }
      ).toolCalls.map((t) => ({ ...t, arguments: t.arguments.replace(':', ': ') })),
    };
    const calls = delta.toolCalls.map((c, k) => ({
      ...c,
      // The first call's key is the run's default; the third's args differ from its message's.
      idempotencyKey: k === 0 ? `${runId}:${c.toolCallId}` : c.idempotencyKey,
      args: k === 2 ? { item: 'rewritten' } : c.args,
    }));
    await ctx.store.commitCheckpoint(runId, epoch, {
      ...delta,
      messages: [spaced, ...results],
      toolCalls: calls,
    });

    const { rows } = await sql<{ calls: Record<string, unknown>[] }>`
      select calls from run_commits where run_id = ${runId} and calls is not null`.execute(ctx.db);
    const stored = rows[0]!.calls;
    expect(stored.map((c) => ['name' in c, 'args' in c, 'key' in c, 'result' in c])).toEqual([
      [false, false, false, false],
      [false, false, true, false],
      [true, true, true, false],
    ]);

    const whole = calls.map((c) => [c.toolCallId, c.name, c.args, c.idempotencyKey, c.result]);
    const history = await ctx.store.loadHistory(runId);
    expect(
      history.toolCalls.map((c) => [c.toolCallId, c.name, c.args, c.idempotencyKey, c.result]),
    ).toEqual(whole);
    const { rows: viewed } = await sql<{
      tool_call_id: string;
      name: string;
      args: unknown;
      idempotency_key: string;
      result: string;
    }>`select v.tool_call_id, v.name, v.args, v.idempotency_key, coalesce(v.result, m.message->>'content') as result
         from tool_calls v left join run_messages m on m.run_id = v.run_id and m.idx = v.result_message_idx
        where v.run_id = ${runId} order by v.tool_call_id`.execute(ctx.db);
    expect(
      viewed.map((v) => [v.tool_call_id, v.name, v.args, v.idempotency_key, v.result]),
    ).toEqual(whole);

    // Down a migration: every field written back, and the view of 0020 gives the same.
    const { error } = await new Migrator({
      db: ctx.db,
      provider: { getMigrations: () => Promise.resolve(MIGRATIONS) },
    }).migrateTo('0022_compressed_commits');
    expect(error).toBeUndefined();
    const { rows: after } = await sql<{ calls: Record<string, unknown>[] }>`
      select calls from run_commits where run_id = ${runId} and calls is not null`.execute(ctx.db);
    expect(after[0]!.calls.every((c) => 'name' in c && 'args' in c && 'key' in c)).toBe(true);
    const { rows: viewedDown } = await sql<{
      name: string;
      args: unknown;
      idempotency_key: string;
    }>`
      select name, args, idempotency_key from tool_calls where run_id = ${runId} order by tool_call_id`.execute(
      ctx.db,
    );
    expect(viewedDown.map((v) => [v.name, v.args, v.idempotency_key])).toEqual(
      calls.map((c) => [c.name, c.args, c.idempotencyKey]),
    );
  });
});
