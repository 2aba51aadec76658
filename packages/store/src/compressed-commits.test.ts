import { describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import type { CheckpointDelta } from '@cairn/engine/store';
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
});
