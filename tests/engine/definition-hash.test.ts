import {
  Agent,
  DELEGATE_TOOL_NAME,
  definitionHashOf,
  Engine,
  memberEntityName,
  Registry,
  RunNotContinuableError,
  Team,
} from '@cairn/engine';
import { ScriptedModel, toolResults } from '@cairn/engine/testing';
import { ENTITY_HEARTBEAT_MS, ServedEntityCatalog } from '@cairn/store';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openTestStore, type TestStore } from '../helpers/test-store.js';

let t: TestStore;
beforeEach(async () => {
  t = await openTestStore();
});
afterEach(() => t.close());

function answerer(
  instructions = 'Answer briefly.',
  onDefinitionChange?: 'error' | 'resume',
): Agent {
  return new Agent({
    name: 'answerer',
    instructions,
    ...(onDefinitionChange && { onDefinitionChange }),
    model: new ScriptedModel({
      toolCallIds: 'fresh',
      decide: ({ messages }) => ({ text: `answer ${messages.length}` }),
    }),
  });
}

function teamOf(member: Agent): Team {
  return new Team({
    name: 'desk',
    members: [member],
    model: new ScriptedModel({
      toolCallIds: 'fresh',
      decide: ({ messages }) => {
        const [result] = toolResults(messages, DELEGATE_TOOL_NAME);
        return result
          ? { text: result.content }
          : {
              toolCalls: [
                { name: DELEGATE_TOOL_NAME, arguments: { member: 'answerer', task: 'go' } },
              ],
            };
      },
    }),
  });
}

describe('the definition hash of a run', () => {
  it("is stamped at creation from the registry, and a member run carries its member's own hash", async () => {
    const member = answerer();
    const team = teamOf(member);
    const done = await new Engine({ store: t.store }).run(team, 'hello');
    expect(done.status).toBe('COMPLETED');
    expect(done.definitionHash).toBe(definitionHashOf(team));
    const view = (await t.store.getRunView(done.runId))!;
    expect(view.definition_hash).toBe(definitionHashOf(team));
    expect(view.member_runs.map((m) => m.definition_hash)).toEqual([definitionHashOf(member)]);
    expect(definitionHashOf(member)).not.toBe(definitionHashOf(team));
  });

  it('is stamped by a producer with the newest definition live workers announce: the new one during a rolling deploy, the old one after a rollback', async () => {
    const catalog = new ServedEntityCatalog(t.db);
    const v1 = answerer('Answer briefly.');
    const v2 = answerer('Answer at length.');
    const producer = new Engine({ store: t.store, catalog, workerId: 'producer' });
    const create = async () =>
      (await producer.createRun({ entity: { kind: 'agent', name: 'answerer' }, input: 'hi' }))
        .definitionHash;
    await catalog.record('old-worker', new Registry({ agents: [v1] }).describeAll());
    // A fixed time: the catalog orders announcements by when they were recorded; this one must be later.
    await new Promise((r) => setTimeout(r, 5));
    await catalog.record('new-worker', new Registry({ agents: [v2] }).describeAll());
    expect(await create()).toBe(definitionHashOf(v2));
    // The old workers' heartbeat after the new ones' does not bring new runs back to the old definition.
    await catalog.record('old-worker', new Registry({ agents: [v1] }).describeAll());
    expect(await create()).toBe(definitionHashOf(v2));
    expect((await catalog.list()).map((e) => e.definitionHash).sort()).toEqual(
      [definitionHashOf(v1), definitionHashOf(v2)].sort(),
    );
    // Rolled back: the new workers stopped refreshing theirs a few heartbeats ago.
    await t.db
      .updateTable('served_entities')
      .set({ last_seen_at: new Date(Date.now() - 10 * ENTITY_HEARTBEAT_MS) })
      .where('definition_hash', '=', definitionHashOf(v2))
      .execute();
    expect(await create()).toBe(definitionHashOf(v1));
  });
});

const ANSWERER = { kind: 'agent', name: 'answerer' } as const;

/** An engine serving `agent` as a worker does. */
function worker(agent: Agent, id: string, versionGraceMs = 60_000): Engine {
  return new Engine({
    store: t.store,
    registry: new Registry({ agents: [agent] }),
    workerId: id,
    versionGraceMs,
  });
}

/** A `continue` job's pickup of the run by `engine`. */
function continuePickup(engine: Engine, runId: string) {
  return engine.processPickup({ job: 'continue', runId, reason: 'continue', attemptsStarted: 1 });
}

describe("a pickup by a worker whose definition of the entity differs from the run's", () => {
  it('leaves the run unclaimed during the version grace period, naming both hashes, then ends it in ERROR with DefinitionChangedError', async () => {
    const v1 = answerer('Answer briefly.');
    const v2 = answerer('Answer at length.');
    const run = await worker(v1, 'old').createRun({ entity: ANSWERER, input: 'hi' });
    const [h1, h2] = [definitionHashOf(v1), definitionHashOf(v2)];
    await expect(
      worker(v2, 'new').processPickup({ job: 'run', runId: run.runId, attemptsStarted: 1 }),
    ).rejects.toMatchObject({
      name: 'EntityAwaitingDeployError',
      message: expect.stringMatching(
        new RegExp(`${h1}.*${h2}.*leaving it for a worker with ${h1}`),
      ),
    });
    expect((await t.store.getRun(run.runId))!).toMatchObject({
      status: 'PENDING',
      epoch: 0,
      definitionHash: h1,
    });

    const outcome = await worker(v2, 'new', 0).processPickup({
      job: 'run',
      runId: run.runId,
      attemptsStarted: 2,
    });
    expect(outcome).toEqual({ kind: 'finished', status: 'ERROR' });
    const view = (await t.store.getRunView(run.runId))!;
    expect(view.error).toMatchObject({
      name: 'DefinitionChangedError',
      message: expect.stringContaining(`started on definition ${h1}, the workers have ${h2}`),
    });
    expect(view.attempts.map((a) => [a.worker_id, a.outcome])).toEqual([['new', 'error']]);
    expect(view.definition_hash).toBe(h1);
  });

  it("a worker with the run's definition takes it during the grace period", async () => {
    const v1 = answerer('Answer briefly.');
    const run = await worker(v1, 'old').createRun({ entity: ANSWERER, input: 'hi' });
    await expect(
      worker(answerer('Answer at length.'), 'new').processPickup({
        job: 'run',
        runId: run.runId,
        attemptsStarted: 1,
      }),
    ).rejects.toThrow();
    expect(
      await worker(answerer('Answer briefly.'), 'old-2').processPickup({
        job: 'run',
        runId: run.runId,
        attemptsStarted: 2,
      }),
    ).toEqual({
      kind: 'finished',
      status: 'COMPLETED',
    });
    expect((await t.store.getRun(run.runId))!.definitionHash).toBe(definitionHashOf(v1));
  });

  it('continue { upgrade: true } resumes the errored run on the new definition, records its hash and a DefinitionUpgraded event', async () => {
    const v1 = answerer('Answer briefly.');
    const v2 = answerer('Answer at length.');
    const run = await worker(v1, 'old').createRun({ entity: ANSWERER, input: 'hi' });
    const latest = worker(v2, 'new', 0);
    await latest.processPickup({ job: 'run', runId: run.runId, attemptsStarted: 1 });
    // Without upgrade, the run meets the same rule again.
    await latest.continueRun(run.runId);
    expect(await continuePickup(latest, run.runId)).toEqual({
      kind: 'finished',
      status: 'ERROR',
    });
    expect((await latest.continueRun(run.runId, { upgrade: true })).action).toBe('resume');
    expect(await continuePickup(latest, run.runId)).toEqual({
      kind: 'finished',
      status: 'COMPLETED',
    });
    const done = (await t.store.getRun(run.runId))!;
    expect(done.definitionHash).toBe(definitionHashOf(v2));
    const upgraded = await t.store.listEventsOfTypes(run.runId, ['DefinitionUpgraded']);
    expect(upgraded.map((e) => e.data)).toEqual([
      expect.objectContaining({ from: definitionHashOf(v1), to: definitionHashOf(v2) }),
    ]);
    // The upgrade was applied once: a later change of definition meets the rule again.
    await t.db
      .updateTable('runs')
      .set({ status: 'ERROR' })
      .where('run_id', '=', run.runId)
      .execute();
    await latest.continueRun(run.runId);
    expect(
      await worker(answerer('Answer in verse.'), 'newer', 0).processPickup({
        job: 'continue',
        runId: run.runId,
        reason: 'continue',
        attemptsStarted: 1,
      }),
    ).toEqual({
      kind: 'finished',
      status: 'ERROR',
    });
  });

  it("resumes without asking when the entity declares onDefinitionChange: 'resume'", async () => {
    const run = await worker(answerer('Answer briefly.'), 'old').createRun({
      entity: ANSWERER,
      input: 'hi',
    });
    const v2 = answerer('Answer at length.', 'resume');
    expect(
      await worker(v2, 'new').processPickup({ job: 'run', runId: run.runId, attemptsStarted: 1 }),
    ).toEqual({ kind: 'finished', status: 'COMPLETED' });
    expect((await t.store.getRun(run.runId))!.definitionHash).toBe(definitionHashOf(v2));
  });

  it('stamps a run created with no known hash (no worker had announced one) at its first claim', async () => {
    const run = await t.store.createRun({
      entity: ANSWERER,
      input: 'hi',
      checkpoint: 'tool-batch',
    });
    expect(run.definitionHash).toBeNull();
    const agent = answerer();
    expect(
      await worker(agent, 'w').processPickup({ job: 'run', runId: run.runId, attemptsStarted: 1 }),
    ).toEqual({ kind: 'finished', status: 'COMPLETED' });
    expect((await t.store.getRunView(run.runId))!.definition_hash).toBe(definitionHashOf(agent));
    expect(await t.store.listEventsOfTypes(run.runId, ['DefinitionUpgraded'])).toEqual([]);
  });

  it('refuses upgrade where it would do nothing: on a queued run and with a fork', async () => {
    const engine = worker(answerer(), 'w');
    const queued = await engine.createRun({ entity: ANSWERER, input: 'hi' });
    await expect(engine.continueRun(queued.runId, { upgrade: true })).rejects.toThrow(
      RunNotContinuableError,
    );
    await expect(engine.continueRun(queued.runId, { upgrade: true })).rejects.toThrow(
      /nothing to upgrade/,
    );
    await engine.processPickup({ job: 'run', runId: queued.runId, attemptsStarted: 1 });
    await expect(
      engine.continueRun(queued.runId, { fork: true, input: 'more', upgrade: true }),
    ).rejects.toThrow(/drop upgrade/);
    expect((await t.store.listChildRuns(queued.runId)).length).toBe(0);
  });

  it("keeps a continue's input through a DefinitionChangedError; an upgrade sent then is merged into that continue, which applies the input", async () => {
    const v1 = answerer('Answer briefly.');
    const run = await worker(v1, 'old').createRun({ entity: ANSWERER, input: 'hi' });
    const latest = worker(answerer('Answer at length.'), 'new', 0);
    await latest.processPickup({ job: 'run', runId: run.runId, attemptsStarted: 1 });
    await latest.continueRun(run.runId, { input: 'and then?' });
    expect(await continuePickup(latest, run.runId)).toEqual({
      kind: 'finished',
      status: 'ERROR',
    });
    expect((await latest.continueRun(run.runId, { upgrade: true })).action).toBe('resume');
    expect(await continuePickup(latest, run.runId)).toEqual({
      kind: 'finished',
      status: 'COMPLETED',
    });
    const { messages } = await t.store.loadHistory(run.runId);
    expect(messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual([
      'hi',
      'and then?',
    ]);
  });
});

describe('a team run whose member changed', () => {
  it('is refused by a worker with the changed member, and continue { upgrade: true } resumes its member run on the new member too', async () => {
    const oldMember = answerer('Answer briefly.');
    const newMember = answerer('Answer carefully.');
    const [v1, v2] = [teamOf(oldMember), teamOf(newMember)];
    const old = new Engine({
      store: t.store,
      registry: new Registry({ teams: [v1] }),
      workerId: 'old',
    });
    const run = await old.createRun({ entity: { kind: 'team', name: 'desk' }, input: 'hi' });
    // As a worker of v1 leaves it when it dies mid-delegation: the delegation turn committed, the member run started.
    const { epoch } = await t.store.claimRun(run.runId, { workerId: 'old', reason: 'run' });
    const delegation = {
      id: 'call-1',
      name: DELEGATE_TOOL_NAME,
      arguments: JSON.stringify({ member: 'answerer', task: 'go' }),
    };
    await t.store.commitCheckpoint(run.runId, epoch, {
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: '', toolCalls: [delegation] },
      ],
      toolCalls: [],
      usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
    });
    const member = await t.store.createRun({
      entity: { kind: 'agent', name: memberEntityName('desk', 'answerer') },
      input: 'go',
      parentRunId: run.runId,
      parentToolCallId: 'call-1',
      parentEpoch: epoch,
      checkpoint: 'tool-batch',
      definitionHash: definitionHashOf(oldMember),
    });

    const latest = new Engine({
      store: t.store,
      registry: new Registry({ teams: [v2] }),
      workerId: 'new',
      versionGraceMs: 0,
    });
    expect(
      await latest.processPickup({
        job: 'continue',
        runId: run.runId,
        reason: 'recovered',
        attemptsStarted: 1,
      }),
    ).toEqual({ kind: 'finished', status: 'ERROR' });
    expect((await t.store.getRun(run.runId))!.error).toMatchObject({
      name: 'DefinitionChangedError',
    });
    expect((await t.store.getRun(member.runId))!.status).toBe('PENDING');

    await latest.continueRun(run.runId, { upgrade: true });
    expect(await continuePickup(latest, run.runId)).toEqual({
      kind: 'finished',
      status: 'COMPLETED',
    });
    const view = (await t.store.getRunView(run.runId))!;
    expect(view.definition_hash).toBe(definitionHashOf(v2));
    expect(view.member_runs.map((m) => [m.run_id, m.status, m.definition_hash])).toEqual([
      [member.runId, 'COMPLETED', definitionHashOf(newMember)],
    ]);
    const memberUpgrade = await t.store.listEventsOfTypes(member.runId, ['DefinitionUpgraded']);
    expect(memberUpgrade.map((e) => e.data)).toEqual([
      expect.objectContaining({
        from: definitionHashOf(oldMember),
        to: definitionHashOf(newMember),
      }),
    ]);
  });
});
