import { describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { LeaseLostError, RunNotContinuableError, RunNotFoundError } from '@cairn/engine';
import type { Message, ToolCallRecord } from '@cairn/engine';
import {
  batchDelta,
  dumpTables,
  history,
  newRun,
  useStoreTestContext,
} from './test-support/store-test-context.js';

const ctx = useStoreTestContext();

describe('PostgresCheckpointStore', () => {
  it('creates a PENDING run with its session and reads it back', async () => {
    const created = await ctx.store.createRun(
      newRun({ userId: 'u1', metadata: { tag: 'a' }, messages: history(3) }),
    );
    expect(created).toMatchObject({
      status: 'PENDING',
      epoch: 0,
      lastCheckpointAtMessageIndex: 3,
      userId: 'u1',
      parentRunId: null,
      entity: { kind: 'agent', name: 'researcher' },
      metadata: { tag: 'a' },
      usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
      error: null,
      cancelRequestedAt: null,
      tenantId: null,
      replayed: false,
    });
    expect(created.runId).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.createdAt).toBeInstanceOf(Date);
    const { replayed: _replayed, ...record } = created;
    expect(await ctx.store.getRun(created.runId)).toEqual(record);
    expect(await ctx.store.getRun('nope')).toBeUndefined();
    // No session named: the run's own session, read from its runs (no row written).
    expect(await ctx.db.selectFrom('sessions').selectAll().execute()).toEqual([]);
    expect(
      await ctx.store.getSessionView({ tenantId: null, sessionId: created.sessionId }),
    ).toMatchObject({ session_id: created.sessionId, user_id: 'u1' });

    const second = await ctx.store.createRun(
      newRun({ runId: 'my-run', sessionId: created.sessionId }),
    );
    expect(second).toMatchObject({
      runId: 'my-run',
      sessionId: created.sessionId,
      lastCheckpointAtMessageIndex: 0,
    });
  });

  it('claims increment the epoch and record attempts, closing the previous one as superseded', async () => {
    const { runId } = await ctx.store.createRun(newRun());
    const first = await ctx.store.claimRun(runId, { workerId: 'w1', reason: 'run' });
    const second = await ctx.store.claimRun(runId, { workerId: 'w2', reason: 'recovered' });
    expect([first.epoch, second.epoch]).toEqual([1, 2]);
    expect(second.run).toMatchObject({ status: 'RUNNING', epoch: 2 });
    const attempts = await ctx.db.selectFrom('run_attempts').selectAll().orderBy('epoch').execute();
    expect(attempts).toMatchObject([
      { epoch: 1, worker_id: 'w1', reason: 'run', outcome: 'superseded' },
      { epoch: 2, worker_id: 'w2', reason: 'recovered', outcome: null, ended_at: null },
    ]);
    expect(attempts[0]?.ended_at).toBeInstanceOf(Date);
  });

  it('refuses to claim COMPLETED or CANCELLED runs and unknown ones', async () => {
    for (const status of ['COMPLETED', 'CANCELLED'] as const) {
      const { runId } = await ctx.store.createRun(newRun());
      const { epoch } = await ctx.store.claimRun(runId, { workerId: 'w1', reason: 'run' });
      await ctx.store.finishRun(runId, epoch, {
        status,
        content: null,
        error: null,
        delta: batchDelta(1),
      });
      const claim = ctx.store.claimRun(runId, { workerId: 'w2', reason: 'continue' });
      await expect(claim).rejects.toBeInstanceOf(RunNotContinuableError);
      await expect(claim).rejects.toMatchObject({ runId, status });
    }
    await expect(
      ctx.store.claimRun('missing', { workerId: 'w', reason: 'run' }),
    ).rejects.toBeInstanceOf(RunNotFoundError);
  });

  it('fences: the older epoch cannot commit and writes nothing; the newer one commits', async () => {
    const { runId } = await ctx.store.createRun(newRun({ messages: history(1) }));
    const old = await ctx.store.claimRun(runId, { workerId: 'w1', reason: 'run' });
    await ctx.store.commitCheckpoint(runId, old.epoch, batchDelta(1));
    const current = await ctx.store.claimRun(runId, { workerId: 'w2', reason: 'recovered' });

    const before = await dumpTables(ctx.db);
    const lost = ctx.store.commitCheckpoint(runId, old.epoch, batchDelta(2, 999));
    await expect(lost).rejects.toBeInstanceOf(LeaseLostError);
    await expect(lost).rejects.toMatchObject({ runId, epoch: old.epoch });
    await expect(
      ctx.store.finishRun(runId, old.epoch, {
        status: 'COMPLETED',
        content: 'x',
        error: null,
        delta: batchDelta(2),
      }),
    ).rejects.toBeInstanceOf(LeaseLostError);
    expect(await dumpTables(ctx.db)).toEqual(before);

    expect(await ctx.store.commitCheckpoint(runId, current.epoch, batchDelta(2))).toBe(9);
    const run = await ctx.store.getRun(runId);
    expect(run).toMatchObject({ lastCheckpointAtMessageIndex: 9, epoch: 2, status: 'RUNNING' });
  });

  it('writes only the delta, whatever the history length', async () => {
    const measure = async (historyLength: number) => {
      const { runId } = await ctx.store.createRun(newRun({ messages: history(historyLength) }));
      const { epoch } = await ctx.store.claimRun(runId, { workerId: 'w1', reason: 'run' });
      const delta = batchDelta(1);
      const count = async (table: 'run_messages' | 'tool_calls') =>
        (
          await ctx.db
            .selectFrom(table)
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .executeTakeFirstOrThrow()
        ).n;
      const rowsBefore = {
        messages: await count('run_messages'),
        toolCalls: await count('tool_calls'),
      };
      const walBefore = (
        await sql<{ lsn: string }>`select pg_current_wal_lsn()::text as lsn`.execute(ctx.db)
      ).rows[0]?.lsn;
      const started = performance.now();
      const index = await ctx.store.commitCheckpoint(runId, epoch, delta);
      const ms = performance.now() - started;
      const wal = await sql<{
        bytes: number;
      }>`select pg_wal_lsn_diff(pg_current_wal_lsn(), ${walBefore}::pg_lsn)::int8 as bytes`.execute(
        ctx.db,
      );
      // Every tuple the commit's transaction wrote carries its xid in xmin: count them across all tables.
      const written = await sql<{ tbl: string; rows: number; bytes: number }>`
        with tx as (select xmin from runs where run_id = ${runId})
        select 'runs' as tbl, count(*)::int8 as rows, coalesce(sum(pg_column_size(t.*)), 0)::int8 as bytes from runs t, tx where t.xmin = tx.xmin
        union all select 'run_commits', count(*), coalesce(sum(pg_column_size(t.*)), 0) from run_commits t, tx where t.xmin = tx.xmin
        union all select 'tool_call_rows', count(*), coalesce(sum(pg_column_size(t.*)), 0) from tool_call_rows t, tx where t.xmin = tx.xmin
        union all select 'run_attempts', count(*), coalesce(sum(pg_column_size(t.*)), 0) from run_attempts t, tx where t.xmin = tx.xmin
        union all select 'sessions', count(*), coalesce(sum(pg_column_size(t.*)), 0) from sessions t, tx where t.xmin = tx.xmin
      `.execute(ctx.db);
      const newMessageBytes = await ctx.db
        .selectFrom('run_commits')
        .select(sql<number>`sum(pg_column_size(messages))::int8`.as('bytes'))
        .where('run_id', '=', runId)
        .where('first_idx', '>=', historyLength)
        .executeTakeFirstOrThrow();
      const result = {
        historyLength,
        index,
        messageRows: (await count('run_messages')) - rowsBefore.messages,
        toolCallRows: (await count('tool_calls')) - rowsBefore.toolCalls,
        writtenByTx: Object.fromEntries(
          written.rows.map((r) => [r.tbl, { rows: r.rows, bytes: r.bytes }]),
        ),
        newMessageJsonbBytes: newMessageBytes.bytes,
        deltaJsonBytes:
          Buffer.byteLength(JSON.stringify(delta.messages)) +
          Buffer.byteLength(JSON.stringify(delta.toolCalls)),
        walBytes: wal.rows[0]?.bytes,
        ms: Math.round(ms * 10) / 10,
      };
      console.log('checkpoint delta', JSON.stringify(result));
      return result;
    };

    const small = await measure(10);
    const large = await measure(2_000);
    for (const r of [small, large]) {
      expect(r.index).toBe(r.historyLength + 4);
      expect(r.messageRows).toBe(4);
      expect(r.toolCallRows).toBe(3);
      expect(r.writtenByTx).toMatchObject({
        runs: { rows: 1 },
        // The write's messages, events and calls: one row.
        run_commits: { rows: 1 },
        tool_call_rows: { rows: 0 },
        run_attempts: { rows: 0 },
        sessions: { rows: 0 },
      });
      // The 4 new messages take about the size of their JSON text, not of the history.
      expect(r.newMessageJsonbBytes).toBeLessThan(
        Buffer.byteLength(JSON.stringify(batchDelta(1).messages)) * 1.5,
      );
    }
    expect(large.writtenByTx).toEqual(small.writtenByTx);
    expect(large.newMessageJsonbBytes).toBe(small.newMessageJsonbBytes);
  });

  it('loadHistory returns messages below the checkpoint index and the tool calls in batch order', async () => {
    const { runId } = await ctx.store.createRun(newRun({ messages: history(1) }));
    const { epoch } = await ctx.store.claimRun(runId, { workerId: 'w1', reason: 'run' });
    await ctx.store.commitCheckpoint(runId, epoch, batchDelta(2));
    await ctx.store.commitCheckpoint(runId, epoch, batchDelta(1));
    // A stray row past the index (never written by the store) must not be loaded.
    await ctx.db
      .insertInto('run_commits')
      .values({
        run_id: runId,
        last_seq: 100,
        end_idx: 10,
        first_seq: 101,
        first_idx: 9,
        messages: JSON.stringify([{ role: 'user', content: 'stray' }]),
        events: null,
      })
      .execute();

    const loaded = await ctx.store.loadHistory(runId);
    expect(loaded.messages).toEqual([
      ...history(1),
      ...batchDelta(2).messages,
      ...batchDelta(1).messages,
    ]);
    expect(loaded.toolCalls.map((c) => c.toolCallId)).toEqual([
      'call_1_1',
      'call_1_2',
      'call_1_3',
      'call_2_1',
      'call_2_2',
      'call_2_3',
    ]);
    expect(loaded.toolCalls[0]).toEqual(batchDelta(1).toolCalls[0]);
    await expect(ctx.store.loadHistory('missing')).rejects.toBeInstanceOf(RunNotFoundError);
  });

  it('upserts a running tool call row into its final state (tool-call mode)', async () => {
    const { runId } = await ctx.store.createRun(newRun({ checkpoint: 'tool-call' }));
    const { epoch } = await ctx.store.claimRun(runId, { workerId: 'w1', reason: 'run' });
    const running: ToolCallRecord = {
      toolCallId: 'c1',
      name: 'slow_search',
      args: { query: 'q' },
      result: null,
      status: 'running',
      batch: 1,
      idempotencyKey: 'k1',
      childRunId: null,
      startedAt: new Date('2025-01-01T00:00:00Z'),
      endedAt: null,
    };
    const usage = { inputTokens: 1, outputTokens: 1, totalTokens: 2 };
    expect(
      await ctx.store.commitCheckpoint(runId, epoch, { messages: [], toolCalls: [running], usage }),
    ).toBe(0);
    const done = {
      ...running,
      status: 'completed' as const,
      result: 'ok',
      endedAt: new Date('2025-01-01T00:00:01Z'),
    };
    await ctx.store.commitCheckpoint(runId, epoch, { messages: [], toolCalls: [done], usage });
    expect((await ctx.store.loadHistory(runId)).toolCalls).toEqual([done]);
    expect((await ctx.store.getRun(runId))?.usage).toEqual(usage);
  });

  it('reads a fork sharing part of one of its source’s writes in history order: the source’s messages, then its own', async () => {
    const source = await ctx.store.createRun(newRun({ messages: history(3) }));
    const own: Message = { role: 'user', content: 'and then?' };
    const fork = await ctx.store.createRun(
      newRun({ messages: [own], sharedHistory: { runId: source.runId, length: 1 } }),
    );
    expect((await ctx.store.loadHistory(fork.runId)).messages).toEqual([history(1)[0], own]);
    expect((await ctx.store.listRunMessages(fork.runId, { offset: 0, limit: 1 })).messages).toEqual(
      [{ index: 0, message: history(1)[0] }],
    );
  });

  it('reads a call whose final record two writes stored as one call, its latest', async () => {
    const { runId } = await ctx.store.createRun(newRun());
    const { epoch } = await ctx.store.claimRun(runId, { workerId: 'w1', reason: 'run' });
    const first = batchDelta(1);
    await ctx.store.commitCheckpoint(runId, epoch, first);
    const again = { ...first.toolCalls[0]!, result: 'again' };
    await ctx.store.commitCheckpoint(runId, epoch, {
      messages: [{ role: 'user', content: 'more' }],
      toolCalls: [again],
      usage: first.usage,
    });
    const calls = (await ctx.store.loadHistory(runId)).toolCalls;
    expect(calls.map((c) => c.toolCallId)).toEqual(['call_1_1', 'call_1_2', 'call_1_3']);
    expect(calls[0]).toEqual(again);
  });

  it('keeps a call stored running in its own row when a write that stores messages ends it, and puts a call stored final in that write’s row', async () => {
    const { runId } = await ctx.store.createRun(newRun({ checkpoint: 'tool-call' }));
    const { epoch } = await ctx.store.claimRun(runId, { workerId: 'w1', reason: 'run' });
    const usage = { inputTokens: 1, outputTokens: 1, totalTokens: 2 };
    const call = (id: string, status: 'running' | 'completed'): ToolCallRecord => ({
      toolCallId: id,
      name: 'slow_search',
      args: { query: id },
      result: status === 'running' ? null : `found ${id}`,
      status,
      batch: 1,
      idempotencyKey: `key-${id}`,
      childRunId: null,
      startedAt: new Date('2025-01-01T00:00:00Z'),
      endedAt: status === 'running' ? null : new Date('2025-01-01T00:00:01Z'),
    });
    await ctx.store.commitCheckpoint(runId, epoch, {
      messages: [],
      toolCalls: [call('c1', 'running')],
      usage,
    });
    const messages: Message[] = [
      {
        role: 'assistant',
        content: null,
        toolCalls: ['c1', 'c2'].map((id) => ({ id, name: 'slow_search', arguments: '{}' })),
      },
      { role: 'tool', toolCallId: 'c1', name: 'slow_search', content: 'found c1' },
      { role: 'tool', toolCallId: 'c2', name: 'slow_search', content: 'found c2' },
    ];
    await ctx.store.commitCheckpoint(runId, epoch, {
      messages,
      toolCalls: [call('c1', 'completed'), call('c2', 'completed')],
      usage,
    });

    expect((await ctx.store.loadHistory(runId)).toolCalls).toEqual([
      call('c1', 'completed'),
      call('c2', 'completed'),
    ]);
    const rows = await ctx.db
      .selectFrom('tool_call_rows')
      .select(['tool_call_id', 'status', 'result_message_idx'])
      .where('run_id', '=', runId)
      .execute();
    expect(rows).toEqual([{ tool_call_id: 'c1', status: 'completed', result_message_idx: 1 }]);
    const { rows: committed } = await sql<{ id: string; ro: number }>`
      select x.id, x.ro from run_commits c, json_to_recordset(c.calls) as x(id text, ro int)
       where c.run_id = ${runId}`.execute(ctx.db);
    expect(committed).toEqual([{ id: 'c2', ro: 3 }]);
  });

  it('finishRun appends the rest, sets the outcome and closes the attempt', async () => {
    const { runId } = await ctx.store.createRun(newRun({ messages: history(1) }));
    const { epoch } = await ctx.store.claimRun(runId, { workerId: 'w1', reason: 'run' });
    const final = await ctx.store.finishRun(runId, epoch, {
      status: 'ERROR',
      content: null,
      error: { name: 'ModelError', message: 'boom', retryable: true },
      delta: batchDelta(1, 42),
    });
    expect(final).toMatchObject({
      status: 'ERROR',
      lastCheckpointAtMessageIndex: 5,
      error: { name: 'ModelError', message: 'boom', retryable: true },
      usage: { totalTokens: 42 },
    });
    const attempt = await ctx.db.selectFrom('run_attempts').selectAll().executeTakeFirstOrThrow();
    expect(attempt.outcome).toBe('error');
    expect(attempt.ended_at).toBeInstanceOf(Date);
    // ERROR is continuable: a new claim resumes it in place.
    const again = await ctx.store.claimRun(runId, { workerId: 'w2', reason: 'continue' });
    expect(again.run).toMatchObject({
      status: 'RUNNING',
      epoch: 2,
      lastCheckpointAtMessageIndex: 5,
    });
  });

  it('finds a member run by the tool call that started it, one per tool call', async () => {
    const parent = await ctx.store.createRun(
      newRun({ entity: { kind: 'team', name: 'research-team' } }),
    );
    await ctx.store.claimRun(parent.runId, { workerId: 'w1', reason: 'run' });
    const child = (runId: string, toolCallId: string) =>
      ctx.store.createRun(
        newRun({
          runId,
          sessionId: parent.sessionId,
          parentRunId: parent.runId,
          parentToolCallId: toolCallId,
          entity: { kind: 'agent', name: 'researcher' },
        }),
      );
    expect(await ctx.store.findMemberRun(parent.runId, 't-1')).toBeUndefined();
    // Two parallel delegations to the same member: each tool call has its own member run.
    await child('a', 't-1');
    await child('b', 't-2');
    expect((await ctx.store.findMemberRun(parent.runId, 't-1'))?.runId).toBe('a');
    expect((await ctx.store.findMemberRun(parent.runId, 't-2'))?.runId).toBe('b');
    await expect(child('c', 't-1')).rejects.toThrow(/runs_one_member_run_per_tool_call/);
    expect((await ctx.store.listChildRuns(parent.runId)).map((r) => r.runId)).toEqual(['a', 'b']);
  });

  it('lists runs by status for a reconciler', async () => {
    const a = await ctx.store.createRun(newRun());
    const b = await ctx.store.createRun(newRun());
    await ctx.store.claimRun(b.runId, { workerId: 'w', reason: 'run' });
    expect((await ctx.store.listRunsByStatus(['PENDING'])).map((r) => r.runId)).toEqual([a.runId]);
    expect(await ctx.store.listRunsByStatus(['PENDING', 'RUNNING'], 60_000)).toEqual([]);
    await ctx.db
      .updateTable('runs')
      .set({ updated_at: sql`now() - interval '2 minutes'` })
      .where('run_id', '=', b.runId)
      .execute();
    expect(
      (await ctx.store.listRunsByStatus(['PENDING', 'RUNNING'], 60_000)).map((r) => r.runId),
    ).toEqual([b.runId]);
    expect(await ctx.store.listRunsByStatus([])).toEqual([]);
  });
});
