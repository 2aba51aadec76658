import { createRegistry } from '@cairn/research-team';
import { Engine, RunNotContinuableError, RunNotFoundError, type RunEvent } from '@cairn/engine';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openTestStore, type TestStore } from '../helpers/test-store.js';

process.env.RESEARCH_TOOL_DELAY_MS = '20';
process.env.RESEARCH_MODEL_LATENCY_MS = '0';

let t: TestStore;
let events: RunEvent[];
let engine: Engine;

beforeEach(async () => {
  t = await openTestStore();
  events = [];
  engine = new Engine({
    store: t.store,
    registry: createRegistry(),
    workerId: 'test-worker',
    onEvent: (e) => events.push(e),
  });
});
afterEach(() => t.close());

const TEAM = { kind: 'team', name: 'research-team' } as const;
const INPUT = "Research the topic 'cairn checkpointing'.";

describe('research team, in process', () => {
  it('runs with tool-batch checkpoints to a summary that quotes the research', async () => {
    const run = await engine.createRun({ entity: TEAM, input: INPUT, checkpoint: 'tool-batch' });
    expect(run.status).toBe('PENDING');
    const result = await engine.execute(run.runId, { reason: 'run' });
    expect(result.outcome).toBe('finished');

    const view = (await t.store.getRunView(run.runId))!;
    expect(view.status).toBe('COMPLETED');
    expect(view.content).toContain('Detail for result-c: lorem ipsum');
    expect(view.content).toContain("Top 3 results for 'cairn checkpointing'");
    expect(view.attempts).toMatchObject([{ epoch: 1, worker_id: 'test-worker', reason: 'run' }]);
    expect(view.tools.map((tc) => tc.name)).toEqual(['delegate_task_to_member']);
    expect(view.messages).toHaveLength(4);
    expect(view.last_checkpoint_at_message_index).toBe(4);

    const [member] = view.member_runs;
    expect(member).toMatchObject({
      parent_run_id: run.runId,
      status: 'COMPLETED',
      checkpoint: 'tool-batch',
    });
    expect(member!.tools.map((tc) => [tc.name, tc.batch])).toEqual([
      ['slow_search', 1],
      ['slow_fetch_detail', 2],
      ['slow_fetch_detail', 3],
      ['slow_fetch_detail', 4],
    ]);
    expect(view.tools[0]!.result).toBe(member!.content);

    const memberCheckpoints = events
      .filter((e) => e.runId === member!.run_id && e.type === 'CheckpointCommitted')
      .map((e) => e.data.lastCheckpointAtMessageIndex);
    expect(memberCheckpoints).toEqual([3, 5, 7, 9]);
    const teamTypes = events.filter((e) => e.runId === run.runId).map((e) => e.type);
    expect(teamTypes[0]).toBe('RunStarted');
    expect(teamTypes.at(-1)).toBe('RunCompleted');
    expect(teamTypes).toContain('CheckpointCommitted');
  });

  it('in run mode writes only the delegation turn before delegating, then the rest at the end', async () => {
    const run = await engine.createRun({ entity: TEAM, input: INPUT });
    await engine.execute(run.runId, { reason: 'run' });
    // The delegation turn is committed first, in every mode: each member run belongs to one stored tool call.
    const checkpoints = events.filter((e) => e.type === 'CheckpointCommitted');
    expect(checkpoints.map((e) => [e.runId, e.data.lastCheckpointAtMessageIndex])).toEqual([
      [run.runId, 2],
    ]);
    const view = (await t.store.getRunView(run.runId))!;
    expect(view).toMatchObject({
      status: 'COMPLETED',
      checkpoint: 'run',
      last_checkpoint_at_message_index: 4,
    });
  });

  it('applies the continue rules of docs/http-api.md', async () => {
    await expect(engine.continueRun('00000000-0000-4000-8000-000000000000')).rejects.toBeInstanceOf(
      RunNotFoundError,
    );
    const pending = await engine.createRun({ entity: TEAM, input: INPUT });
    expect((await engine.continueRun(pending.runId)).action).toBe('already-queued');

    await engine.execute(pending.runId, { reason: 'run' });
    await expect(engine.continueRun(pending.runId)).rejects.toBeInstanceOf(RunNotContinuableError);
    await expect(engine.continueRun(pending.runId, { fork: true })).rejects.toThrow(
      /input is required/,
    );

    const fork = await engine.continueRun(pending.runId, {
      fork: true,
      input: 'And now in French.',
    });
    expect(fork.action).toBe('fork');
    expect(fork.run.runId).not.toBe(pending.runId);
    expect(fork.run.lastCheckpointAtMessageIndex).toBe(5);
    const forkView = (await t.store.getRunView(fork.run.runId))!;
    expect(forkView.forked_from).toEqual({
      run_id: pending.runId,
      checkpoint: expect.any(Number),
      message_index: 4,
    });
    expect(forkView.messages).toHaveLength(5);

    const cancelled = await engine.createRun({ entity: TEAM, input: INPUT });
    const controller = new AbortController();
    controller.abort(new Error('user asked'));
    await engine.execute(cancelled.runId, { reason: 'run', signal: controller.signal });
    expect((await t.store.getRun(cancelled.runId))!.status).toBe('CANCELLED');
    await expect(engine.continueRun(cancelled.runId)).rejects.toThrow(
      /cancelled run is not continuable/,
    );
  });

  it('cancels mid-run: CANCELLED persisted with the work done, member cancelled too', async () => {
    process.env.RESEARCH_TOOL_DELAY_MS = '200';
    const run = await engine.createRun({ entity: TEAM, input: INPUT, checkpoint: 'tool-batch' });
    const controller = new AbortController();
    const execution = engine.execute(run.runId, { reason: 'run', signal: controller.signal });
    const memberCheckpointed = () =>
      events.some((e) => e.type === 'CheckpointCommitted' && e.runId !== run.runId);
    await expect.poll(memberCheckpointed, { interval: 10, timeout: 30_000 }).toBe(true);
    controller.abort(new Error('user asked'));
    const result = await execution;
    process.env.RESEARCH_TOOL_DELAY_MS = '20';

    expect(result.outcome === 'finished' && result.run.status).toBe('CANCELLED');
    const view = (await t.store.getRunView(run.runId))!;
    expect(view.status).toBe('CANCELLED');
    expect(view.member_runs[0]!.status).toBe('CANCELLED');
    expect(view.member_runs[0]!.tools.length).toBeGreaterThanOrEqual(1);
    // The interrupted delegation is closed by the finish, not left running.
    expect(view.tools.map((t) => [t.name, t.status, t.result])).toEqual([
      [
        'delegate_task_to_member',
        'error',
        'interrupted: the run ended CANCELLED before this call finished',
      ],
    ]);
    expect(events.map((e) => e.type)).toContain('RunCancelled');
  });

  it('stops at the next checkpoint and hands the run back when asked, then resumes elsewhere', async () => {
    const run = await engine.createRun({ entity: TEAM, input: INPUT, checkpoint: 'tool-batch' });
    const handover = new AbortController();
    const execution = engine.execute(run.runId, { reason: 'run', handover: handover.signal });
    await expect
      .poll(
        () =>
          events.some((e) => e.type === 'ToolCallStarted' && e.data.name === 'slow_fetch_detail'),
        { interval: 5, timeout: 30_000 },
      )
      .toBe(true);
    handover.abort();
    expect(await execution).toEqual({ outcome: 'handed-over', runId: run.runId });
    expect((await t.store.getRun(run.runId))!.status).toBe('RUNNING');

    const other = new Engine({ store: t.store, registry: createRegistry(), workerId: 'other' });
    const resumed = await other.execute(run.runId, { reason: 'handover' });
    expect(resumed.outcome === 'finished' && resumed.run.status).toBe('COMPLETED');
    const view = (await t.store.getRunView(run.runId))!;
    expect(view.attempts.map((a) => [a.worker_id, a.reason])).toEqual([
      ['test-worker', 'run'],
      ['other', 'handover'],
    ]);
    const member = view.member_runs;
    expect(member).toHaveLength(1);
    expect(member[0]!.tools.map((tc) => tc.name)).toEqual([
      'slow_search',
      'slow_fetch_detail',
      'slow_fetch_detail',
      'slow_fetch_detail',
    ]);
  });
});
