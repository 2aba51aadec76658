import {
  Agent,
  Engine,
  OpenAIChatModel,
  parkAgainFor,
  Registry,
  tool,
  type CapacityLimit,
  type CapacitySettings,
  type ModelCapacity,
  type Permit,
} from '@cairn/engine';
import {
  ScriptedModel,
  startFakeOpenAIServer,
  toolResults,
  type FakeOpenAIServer,
} from '@cairn/engine/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { openTestStore, type TestStore } from '../helpers/test-store.js';

// What a run does when the fleet's model capacity has no room for it, on the real Postgres limiter.

let t: TestStore;
let server: FakeOpenAIServer | undefined;
beforeEach(async () => {
  t = await openTestStore();
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  await t.close();
});

const MODEL = 'scripted-capacity';
const ONE_AT_A_TIME: CapacityLimit = { concurrency: 1 };

/** Takes the model's only slot as another run of the fleet would; `release()` gives it back. */
async function holdTheSlot(limiter: ModelCapacity): Promise<{ release(): Promise<void> }> {
  const answer = await limiter.tryAcquire({
    model: MODEL,
    limit: ONE_AT_A_TIME,
    waiterId: 'another-run',
    tenant: '',
    weight: 1,
    priority: 5,
    waitedMs: 0,
    tokens: 1,
  });
  if (!answer.granted) throw new Error(`the slot was not free: ${answer.reason}`);
  const permit: Permit = answer.permit;
  return { release: () => limiter.release(permit, { ok: true }) };
}

/** Pings once (a tool batch), then answers quoting the result. */
function pinger(onPing: () => Promise<void> | void = () => undefined) {
  const executions: string[] = [];
  const ping = tool({
    name: 'ping',
    description: 'Answers pong',
    parameters: z.object({}),
    execute: async (_args, ctx) => {
      executions.push(ctx.toolCallId);
      await onPing();
      return 'pong';
    },
  });
  const model = new ScriptedModel({
    name: MODEL,
    decide: ({ messages }) =>
      toolResults(messages).length === 0
        ? { toolCalls: [{ name: 'ping', arguments: {} }] }
        : { text: `got ${toolResults(messages)[0]!.content}` },
  });
  return { agent: new Agent({ name: 'pinger', model, tools: [ping] }), executions };
}

/** The engine's capacity settings: the Postgres limiter, one request at a time, a short capacity wait. */
function capacityOf(waitMs = 150): CapacitySettings {
  return {
    limiter: t.store.modelCapacity,
    limits: [{ model: MODEL, ...ONE_AT_A_TIME }],
    waitMs,
    pollMs: 25,
  };
}

function engineFor(agent: Agent, options: { waitMs?: number; maxAttempts?: number } = {}) {
  return new Engine({
    store: t.store,
    registry: new Registry({ agents: [agent] }),
    workerId: 'w',
    maxAttempts: options.maxAttempts,
    capacity: capacityOf(options.waitMs),
  });
}

/** A pinger run parked at its first request, the model's one slot held by another: its engine, the holder, the run and its park. */
async function parkedPinger() {
  const { agent } = pinger();
  const engine = engineFor(agent);
  const holder = await holdTheSlot(t.store.modelCapacity);
  const run = await engine.createRun({ entity: { kind: 'agent', name: 'pinger' }, input: 'go' });
  const first = await engine.execute(run.runId, { reason: 'run' });
  if (first.outcome !== 'parked') throw new Error(`expected a park, got ${first.outcome}`);
  return { engine, holder, run, park: first.park };
}

describe('a run with no model permit within the capacity wait', () => {
  it('parks RUNNING at its last checkpoint, showing what it waits for, and resumes with reason capacity once there is room', async () => {
    const { agent, executions } = pinger();
    const engine = engineFor(agent);
    const holder = await holdTheSlot(t.store.modelCapacity);
    const run = await engine.createRun({
      entity: { kind: 'agent', name: 'pinger' },
      input: 'ping please',
    });

    const first = await engine.execute(run.runId, { reason: 'run' });
    expect(first.outcome).toBe('parked');
    const parked = (await t.store.getRunView(run.runId))!;
    expect(parked.status).toBe('RUNNING');
    expect(parked.waiting).toMatchObject({ for: 'capacity', model: MODEL });
    expect(Date.parse(parked.waiting!.until)).toBeGreaterThan(Date.parse(parked.updated_at) - 1);
    expect(parked.attempts.map((a) => [a.reason, a.outcome])).toEqual([['run', 'parked']]);
    // The input is committed with the park: nothing is asked or run twice on resume.
    expect(parked.last_checkpoint_at_message_index).toBe(1);
    const events = await t.store.listEvents(run.runId);
    expect(events.filter((e) => e.type === 'CapacityWait')).toHaveLength(1);
    expect(events.find((e) => e.type === 'CapacityWait')!.data).toMatchObject({ model: MODEL });

    await holder.release();
    const park = first.outcome === 'parked' ? first.park : undefined;
    const second = await engine.execute(run.runId, {
      reason: 'capacity',
      capacityWaitedMs: park!.waitedMs,
    });
    expect(second.outcome === 'finished' && second.run.status).toBe('COMPLETED');
    const done = (await t.store.getRunView(run.runId))!;
    expect(done.content).toBe('got pong');
    expect(done.waiting).toBeNull();
    expect(done.attempts.map((a) => [a.reason, a.outcome])).toEqual([
      ['run', 'parked'],
      ['capacity', 'completed'],
    ]);
    expect(done.messages.filter((m) => m.role === 'user')).toHaveLength(1);
    expect(executions).toHaveLength(1);
  });

  it('back from its park while there is still no room, it parks again before any claim: no attempt, no event', async () => {
    const { engine, holder, run, park } = await parkedPinger();
    // The park names its waiter in the model's line, as the queue records it on the job.
    expect(park.waiter).toEqual({ id: run.runId, tenant: '', priority: run.priority });
    const before = (await t.store.getRunView(run.runId))!;
    const eventsBefore = (await t.store.listEvents(run.runId)).length;

    // Its job is picked up with the slot still held: asked first, it is delayed again, the run untouched.
    const pickup = { model: MODEL, waiter: park.waiter, waitedMs: park.waitedMs };
    const again = await parkAgainFor(capacityOf(), pickup);
    expect(again).toBeGreaterThan(150);
    const still = (await t.store.getRunView(run.runId))!;
    expect(still.attempts).toEqual(before.attempts);
    expect(still.epoch).toBe(before.epoch);
    expect(await t.store.listEvents(run.runId)).toHaveLength(eventsBefore);

    // Room: the next pickup claims it, with reason capacity, and it completes.
    await holder.release();
    expect(await parkAgainFor(capacityOf(), pickup)).toBeUndefined();
    const second = await engine.execute(run.runId, {
      reason: 'capacity',
      capacityWaitedMs: park.waitedMs,
    });
    expect(second.outcome === 'finished' && second.run.status).toBe('COMPLETED');
    const done = (await t.store.getRunView(run.runId))!;
    expect(done.attempts.map((a) => [a.reason, a.outcome])).toEqual([
      ['run', 'parked'],
      ['capacity', 'completed'],
    ]);
  });

  it('parked again before its claim, it shows the new time its job is due, and is ended by the pickup that finds its deadline past', async () => {
    const { engine, holder, run } = await parkedPinger();
    const parkedUntil = (await t.store.getRunView(run.runId))!.waiting!.until;

    // Its job is delayed again (the queue's pickup, refused by the limiter): the view shows the new time, never a past one.
    const later = new Date(Date.parse(parkedUntil) + 60_000);
    const waiting = { for: 'capacity', model: MODEL, until: later.toISOString() } as const;
    expect(await t.store.recordParkedAgain(run.runId, waiting)).toBe(false);
    const view = (await t.store.getRunView(run.runId))!;
    expect(view.waiting).toEqual(waiting);
    expect(view.attempts.map((a) => [a.reason, a.outcome])).toEqual([['run', 'parked']]);
    // A run held in line before its first claim shows its wait too, still PENDING; its claim clears it.
    const pending = await engine.createRun({
      entity: { kind: 'agent', name: 'pinger' },
      input: 'queued',
    });
    expect(await t.store.recordParkedAgain(pending.runId, waiting)).toBe(false);
    expect(await t.store.getRunView(pending.runId)).toMatchObject({ status: 'PENDING', waiting });

    // Its deadline passes while it waits: the next park again says so, and the claim ends the run.
    await t.db
      .updateTable('runs')
      .set({ deadline_at: new Date(Date.now() - 1000) })
      .where('run_id', '=', run.runId)
      .execute();
    expect(await t.store.recordParkedAgain(run.runId, waiting)).toBe(true);
    const ended = await engine.execute(run.runId, { reason: 'capacity' });
    expect(ended.outcome === 'finished' && ended.run.status).toBe('ERROR');
    const done = (await t.store.getRunView(run.runId))!;
    expect(done.error?.name).toBe('DeadlineExceededError');
    expect(done.waiting).toBeNull();
    await holder.release();
  });

  it('parks after a committed tool batch without running the batch again', async () => {
    let holder: { release(): Promise<void> } | undefined;
    // The tool takes the slot (another run's request) while the run's own permit is back.
    const { agent, executions } = pinger(async () => {
      holder = await holdTheSlot(t.store.modelCapacity);
    });
    const engine = engineFor(agent);
    const run = await engine.createRun({ entity: { kind: 'agent', name: 'pinger' }, input: 'go' });
    const first = await engine.execute(run.runId, { reason: 'run' });
    expect(first.outcome).toBe('parked');
    const parked = (await t.store.getRunView(run.runId))!;
    expect(parked.tools.map((c) => [c.name, c.status])).toEqual([['ping', 'completed']]);
    expect(parked.last_checkpoint_at_message_index).toBe(3);

    await holder!.release();
    const second = await engine.execute(run.runId, { reason: 'capacity' });
    expect(second.outcome === 'finished' && second.run.status).toBe('COMPLETED');
    expect(executions).toHaveLength(1);
  });

  it('never counts capacity pickups toward the attempts cap', async () => {
    const { agent } = pinger();
    const engine = engineFor(agent, { maxAttempts: 1 });
    const holder = await holdTheSlot(t.store.modelCapacity);
    const run = await engine.createRun({ entity: { kind: 'agent', name: 'pinger' }, input: 'go' });
    expect((await engine.execute(run.runId, { reason: 'run' })).outcome).toBe('parked');
    for (let park = 0; park < 3; park++) {
      expect((await engine.execute(run.runId, { reason: 'capacity' })).outcome).toBe('parked');
    }
    await holder.release();
    const done = await engine.execute(run.runId, { reason: 'capacity' });
    expect(done.outcome === 'finished' && done.run.status).toBe('COMPLETED');
    const view = (await t.store.getRunView(run.runId))!;
    expect(view.attempts.filter((a) => a.reason === 'capacity')).toHaveLength(4);
    expect(view.error).toBeNull();
  });

  it('waits in place in run mode (no checkpoint to park on), announcing the wait', async () => {
    const { agent } = pinger();
    const engine = engineFor(agent, { waitMs: 50 });
    const holder = await holdTheSlot(t.store.modelCapacity);
    const run = await engine.createRun({
      entity: { kind: 'agent', name: 'pinger' },
      input: 'go',
      checkpoint: 'run',
    });
    const execution = engine.execute(run.runId, { reason: 'run' });
    await expect.poll(async () => (await t.store.getRun(run.runId))?.epoch).toBe(1);
    // A fixed window on purpose: six times the 50 ms capacity wait, after which a run in another
    // mode would have parked; the claim is that this one keeps waiting in place, in its one attempt.
    await new Promise((resolve) => setTimeout(resolve, 300));
    await holder.release();
    const result = await execution;
    expect(result.outcome === 'finished' && result.run.status).toBe('COMPLETED');
    const view = (await t.store.getRunView(run.runId))!;
    expect(view.attempts.map((a) => [a.reason, a.outcome])).toEqual([['run', 'completed']]);
    const events = await t.store.listEvents(run.runId);
    expect(events.some((e) => e.type === 'CapacityWait')).toBe(true);
  });
});

describe("a provider's 429", () => {
  /** A quota of 2 requests a second: the run's third request is refused with retry-after. */
  async function quotaServer() {
    server = await startFakeOpenAIServer({
      quota: { perModel: { 'gpt-q': { requestsPerMinute: 2 } }, windowMs: 1000 },
      decide: ({ messages }) =>
        toolResults(messages).length < 2
          ? { toolCalls: [{ name: 'ping', arguments: {} }] }
          : { text: 'done' },
    });
    return server;
  }
  const ping = tool({
    name: 'ping',
    description: 'Answers pong',
    parameters: z.object({}),
    execute: () => 'pong',
  });
  const noRetries = { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1 };

  it('is waited out through the fleet limiter, never ERROR and never a retry', async () => {
    const quota = await quotaServer();
    const model = new OpenAIChatModel({ model: 'gpt-q', apiKey: 'k', baseURL: quota.url });
    const engine = new Engine({
      store: t.store,
      registry: new Registry({ agents: [new Agent({ name: 'pinger', model, tools: [ping] })] }),
      retry: noRetries,
      capacity: { limiter: t.store.modelCapacity, limits: [], waitMs: 10_000, pollMs: 50 },
    });
    const run = await engine.createRun({ entity: { kind: 'agent', name: 'pinger' }, input: 'go' });
    const result = await engine.execute(run.runId, { reason: 'run' });
    expect(result.outcome === 'finished' && result.run.status).toBe('COMPLETED');
    expect(quota.quota.accepted('gpt-q')).toBe(3);
    expect(quota.quota.rejected('gpt-q')).toBeGreaterThanOrEqual(1);
    // The model got an adaptive limit at its first 429.
    const snapshot = await t.store.modelCapacity.snapshot();
    expect(snapshot.find((s) => s.model === model.name)?.concurrencyLimit).toBeGreaterThan(0);
    const events = await t.store.listEvents(run.runId);
    const rateLimited = events.filter(
      (e) =>
        e.type === 'ModelRequestCompleted' && (e.data as { rateLimited?: boolean }).rateLimited,
    );
    expect(rateLimited.length).toBeGreaterThanOrEqual(1);
  });

  it('is waited out in place by an engine with no limiter, never ERROR and never a retry', async () => {
    const quota = await quotaServer();
    const model = new OpenAIChatModel({ model: 'gpt-q', apiKey: 'k', baseURL: quota.url });
    const engine = new Engine({
      store: t.store,
      registry: new Registry({ agents: [new Agent({ name: 'pinger', model, tools: [ping] })] }),
      retry: noRetries,
    });
    const run = await engine.createRun({ entity: { kind: 'agent', name: 'pinger' }, input: 'go' });
    const result = await engine.execute(run.runId, { reason: 'run' });
    expect(result.outcome === 'finished' && result.run.status).toBe('COMPLETED');
    expect(quota.quota.rejected('gpt-q')).toBeGreaterThanOrEqual(1);
  });
});
