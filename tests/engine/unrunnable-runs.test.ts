import { Agent, Engine, Registry } from '@cairn/engine';
import { ScriptedModel } from '@cairn/engine/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openTestStore, type TestStore } from '../helpers/test-store.js';

let t: TestStore;
beforeEach(async () => {
  t = await openTestStore();
});
afterEach(() => t.close());

const answerer = new Agent({
  name: 'answerer',
  model: new ScriptedModel({ decide: ({ messages }) => ({ text: `answer ${messages.length}` }) }),
  checkpoint: 'tool-batch',
});

describe('a pickup of a run that cannot make progress', () => {
  it('ends a run whose stored history does not parse in ERROR naming the message, in one claim, instead of failing every pickup', async () => {
    const engine = new Engine({
      store: t.store,
      registry: new Registry({ agents: [answerer] }),
      workerId: 'w1',
    });
    const run = await engine.createRun({
      entity: { kind: 'agent', name: 'answerer' },
      input: 'hi',
    });
    const { epoch } = await t.store.claimRun(run.runId, { workerId: 'w0', reason: 'run' });
    await t.store.commitCheckpoint(run.runId, epoch, {
      messages: [{ role: 'user', content: 'hi' }],
      toolCalls: [],
      usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
    });
    // A row this code cannot read (written by a newer version, or damaged).
    await t.db
      .updateTable('run_commits')
      .set({ messages: JSON.stringify([{ role: 'robot', says: 'beep' }]) })
      .where('run_id', '=', run.runId)
      .where('messages', 'is not', null)
      .execute();

    const outcome = await engine.processPickup({
      job: 'continue',
      runId: run.runId,
      reason: 'recovered',
      attemptsStarted: 2,
    });
    expect(outcome).toEqual({ kind: 'finished', status: 'ERROR' });
    const failed = (await t.store.getRun(run.runId))!;
    expect(failed.error).toMatchObject({
      name: 'StoredStateError',
      message: expect.stringContaining('message 0'),
    });
    const view = (await t.store.getRunView(run.runId))!;
    expect(view.attempts.map((a) => a.outcome)).toEqual(['superseded', 'error']);
  });

  it('leaves a run whose entity this worker lacks unclaimed during the version grace period, then ends it in ERROR', async () => {
    const producer = new Engine({
      store: t.store,
      registry: new Registry({ agents: [answerer] }),
      workerId: 'p',
    });
    const run = await producer.createRun({
      entity: { kind: 'agent', name: 'answerer' },
      input: 'hi',
    });
    const other = new Engine({
      store: t.store,
      registry: new Registry({ agents: [] }),
      workerId: 'old-worker',
      versionGraceMs: 60_000,
    });
    await expect(
      other.processPickup({ job: 'run', runId: run.runId, attemptsStarted: 1 }),
    ).rejects.toMatchObject({
      name: 'EntityAwaitingDeployError',
    });
    expect((await t.store.getRun(run.runId))!).toMatchObject({ status: 'PENDING', epoch: 0 });
    const late = new Engine({
      store: t.store,
      registry: new Registry({ agents: [] }),
      workerId: 'old-worker',
      versionGraceMs: 0,
    });
    expect(await late.processPickup({ job: 'run', runId: run.runId, attemptsStarted: 2 })).toEqual({
      kind: 'finished',
      status: 'ERROR',
    });
    expect((await t.store.getRun(run.runId))!.error).toMatchObject({ name: 'EntityNotFoundError' });
  });
});
