import { describe, expect, it } from 'vitest';
import type { KyselyPlugin } from 'kysely';
import { LeaseLostError, type RunEvent } from '@cairn/engine';
import { PostgresCheckpointStore } from './postgres-checkpoint-store.js';
import { RUN_RECORD_COLUMNS } from './run-row.js';
import { batchDelta, newRun, useStoreTestContext } from './test-support/store-test-context.js';

const ctx = useStoreTestContext();

function event(
  runId: string,
  epoch: number,
  type: RunEvent['type'],
  data: Record<string, unknown> = {},
): RunEvent {
  return { type, runId, epoch, data, at: new Date().toISOString() };
}

async function claimedRun() {
  const run = await ctx.store.createRun(newRun());
  const { epoch } = await ctx.store.claimRun(run.runId, { workerId: 'w1', reason: 'run' });
  return { runId: run.runId, epoch };
}

describe('one writer for checkpoints and finishes', () => {
  it('stores each tool result once, in its tool message, and every reader still returns it', async () => {
    const { runId, epoch } = await claimedRun();
    const delta = batchDelta(1);
    await ctx.store.commitCheckpoint(runId, epoch, delta);

    const rows = await ctx.db
      .selectFrom('tool_calls')
      .select(['tool_call_id', 'result', 'result_message_idx'])
      .where('run_id', '=', runId)
      .orderBy('tool_call_id')
      .execute();
    expect(rows).toEqual([
      { tool_call_id: 'call_1_1', result: null, result_message_idx: 1 },
      { tool_call_id: 'call_1_2', result: null, result_message_idx: 2 },
      { tool_call_id: 'call_1_3', result: null, result_message_idx: 3 },
    ]);
    const results = delta.toolCalls.map((c) => c.result);
    const history = await ctx.store.loadHistory(runId);
    expect(history.toolCalls.map((c) => c.result)).toEqual(results);
    const view = await ctx.store.getRunView(runId);
    expect(view!.tools.map((t) => t.result)).toEqual(results);
  });

  it('keeps a result that has no tool message in the delta in the tool call row', async () => {
    const { runId, epoch } = await claimedRun();
    const delta = batchDelta(1);
    const call = { ...delta.toolCalls[0]!, result: 'answered elsewhere' };
    await ctx.store.commitCheckpoint(runId, epoch, { ...delta, toolCalls: [call] });
    const view = await ctx.store.getRunView(runId);
    expect(view!.tools.map((t) => [t.tool_call_id, t.result])).toEqual([
      ['call_1_1', 'answered elsewhere'],
    ]);
  });

  it('stores the events a checkpoint and a finish cover in the same statement, numbered after earlier ones', async () => {
    const { runId, epoch } = await claimedRun();
    await ctx.store.appendEvent(runId, { type: 'ActionDecided', data: { by: 'someone' } });
    await ctx.store.commitCheckpoint(runId, epoch, {
      ...batchDelta(1),
      events: [
        event(runId, epoch, 'RunStarted'),
        event(runId, epoch, 'ToolCallCompleted', { toolCallId: 'call_1_1' }),
      ],
    });
    const done = await ctx.store.finishRun(runId, epoch, {
      status: 'COMPLETED',
      content: 'answer',
      error: null,
      delta: {
        messages: [{ role: 'assistant', content: 'answer' }],
        toolCalls: [],
        usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 },
        events: [event(runId, epoch, 'RunCompleted', { content: 'answer' })],
      },
    });
    expect(done).toMatchObject({
      status: 'COMPLETED',
      content: 'answer',
      lastCheckpointAtMessageIndex: 5,
    });
    const events = await ctx.store.listEvents(runId);
    expect(events.map((e) => [e.seq, e.type])).toEqual([
      [1, 'ActionDecided'],
      [2, 'RunStarted'],
      [3, 'ToolCallCompleted'],
      [4, 'RunCompleted'],
    ]);
    expect(events[2]!.data).toMatchObject({ toolCallId: 'call_1_1', epoch });
    const view = await ctx.store.getRunView(runId);
    expect(view!.attempts.map((a) => a.outcome)).toEqual(['completed']);
  });

  it('writes nothing at all, events included, when the epoch lost the run', async () => {
    const { runId, epoch } = await claimedRun();
    await ctx.store.claimRun(runId, { workerId: 'w2', reason: 'recovered' });
    await expect(
      ctx.store.commitCheckpoint(runId, epoch, {
        ...batchDelta(1),
        events: [event(runId, epoch, 'CheckpointCommitted')],
      }),
    ).rejects.toBeInstanceOf(LeaseLostError);
    await expect(
      ctx.store.finishRun(runId, epoch, {
        status: 'COMPLETED',
        content: 'late',
        error: null,
        delta: { ...batchDelta(2), events: [event(runId, epoch, 'RunCompleted')] },
      }),
    ).rejects.toBeInstanceOf(LeaseLostError);
    expect(await ctx.store.listEvents(runId)).toEqual([]);
    const counts = await Promise.all(
      (['run_messages', 'tool_calls'] as const).map((t) =>
        ctx.db
          .selectFrom(t)
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .where('run_id', '=', runId)
          .executeTakeFirstOrThrow(),
      ),
    );
    expect(counts.map((c) => Number(c.n))).toEqual([0, 0]);
    expect((await ctx.store.getRun(runId))!.status).toBe('RUNNING');
  });

  it('sends back the run by its columns from a claim and a finish, and only the new message index from a checkpoint', async () => {
    const { runId } = await ctx.store.createRun(newRun());
    const returned: string[][] = [];
    const columnsOfResults: KyselyPlugin = {
      transformQuery: ({ node }) => node,
      transformResult: ({ result }) => {
        returned.push(Object.keys(result.rows[0] ?? {}));
        return Promise.resolve(result);
      },
    };
    const store = new PostgresCheckpointStore(ctx.db.withPlugin(columnsOfResults));
    const { epoch } = await store.claimRun(runId, { workerId: 'w1', reason: 'run' });
    expect(returned).toEqual([
      [...RUN_RECORD_COLUMNS, 'attempts_since_progress', 'continue_request', 'tree_usage'],
    ]);
    returned.length = 0;
    expect(await store.commitCheckpoint(runId, epoch, batchDelta(1))).toBe(4);
    expect(returned).toEqual([['last_checkpoint_at_message_index']]);
    returned.length = 0;
    const done = await store.finishRun(runId, epoch, {
      status: 'COMPLETED',
      content: 'answer',
      error: null,
      delta: { ...batchDelta(2), events: [event(runId, epoch, 'RunCompleted')] },
    });
    expect(returned).toEqual([[...RUN_RECORD_COLUMNS]]);
    expect(done).toEqual(await ctx.store.getRun(runId));
  });
});
