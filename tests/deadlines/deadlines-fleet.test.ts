import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Conflict, createClient } from '@cairn/client';
import { DecisionConflictError } from '@cairn/engine';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { requiresBackend } from '@cairn/services';
import type { QueueBackendKind } from '@cairn/runtime';
import { FLEET_BACKEND, QUEUE_BACKENDS, startFleet, waitFor, type Fleet } from '../fleet/fleet.js';
import { ledgerKey } from './deadline-registry.js';
import { expectMemberStoppedAtTeamDeadline } from './member-deadline.js';

const DEADLINE_REGISTRY = fileURLToPath(new URL('./deadline-registry.ts', import.meta.url));
const STEPPER = { kind: 'agent', name: 'stepper' } as const;
const TEAM = { kind: 'team', name: 'deadline-team' } as const;
/** Long enough for a worker under load to pick the run up and commit its quick step first. */
const DEADLINE_MS = 6000;
/** A long step the deadline must cut short: the run ends long before it would return. */
const LONG_INPUT = 'Work: long steps take 120000 ms';

function start(backend: QueueBackendKind = FLEET_BACKEND): Promise<Fleet> {
  return startFleet({ backend, registryModule: DEADLINE_REGISTRY });
}

/** The tool ledger's entries of the runs (`long_step:aborted:DeadlineExceededError`, ...), in order. */
function ledger(f: Fleet, ...runIds: string[]): string[] {
  try {
    return readFileSync(f.ledgerFile, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => line.split('\t'))
      .filter(([, key]) => runIds.some((runId) => key!.startsWith(`${runId}:`)))
      .map(([entry]) => entry!);
  } catch {
    return [];
  }
}

async function finalEvents(f: Fleet, runId: string): Promise<string[]> {
  const events = await f.client.listEventsOfTypes(runId, ['RunCompleted', 'RunError']);
  return events.map((e) => e.type);
}

// One database, queue and client for these scenarios (runs are independent by id, the ledger is read
// by run); the ones whose worker needs no settings of its own share worker 'a'.
let f: Fleet;
beforeAll(async () => {
  f = await start();
});
afterAll(() => f?.stop());

describe(`deadlines under real workers (${FLEET_BACKEND})`, () => {
  // Its runs are independent by id and mostly wait on their deadlines: they run side by side.
  describe.concurrent('on one shared worker', () => {
    // Its `bounded` entity's maxDurationMs; the other entities have none.
    // Room for every case's runs at once (a team's member run too), so none waits for a slot past its deadline.
    beforeAll(async () => {
      await f.spawnWorker('a', {
        DEADLINE_MAX_DURATION_MS: String(DEADLINE_MS),
        WORKER_CONCURRENCY: '8',
      });
    });
    afterAll(() => f?.stopWorkers());

    it('aborts the tool in flight at the deadline (its signal says why) and ends the run in ERROR, the earlier batch committed', async () => {
      const run = await f.client.enqueueRun({
        entity: STEPPER,
        input: LONG_INPUT,
        deadlineMs: DEADLINE_MS,
      });

      const done = await f.client.waitForRun(run.runId, { timeoutMs: 60_000 });
      expect(done.status).toBe('ERROR');
      expect(done.error).toMatchObject({
        name: 'DeadlineExceededError',
        message: expect.stringContaining(`run ${run.runId} passed its deadline`),
      });
      // Ended by the worker's own timer, at or after its deadline and long before the step would have returned.
      expect(done.updatedAt.getTime()).toBeGreaterThanOrEqual(run.deadlineAt!.getTime());
      expect(ledger(f, run.runId)).toEqual([
        ledgerKey('quick_step', 'finished'),
        ledgerKey('long_step', 'started'),
        ledgerKey('long_step', 'aborted:DeadlineExceededError'),
      ]);
      const view = (await f.client.getRun(run.runId))!;
      expect(view.last_checkpoint_at_message_index).toBe(3);
      expect(view.tools.map((c) => [c.name, c.status])).toEqual([['quick_step', 'completed']]);
      expect(view.attempts.map((a) => [a.worker_id, a.reason, a.outcome])).toEqual([
        ['a', 'run', 'error'],
      ]);
      expect(await finalEvents(f, run.runId)).toEqual(['RunError']);
    });

    it('lets a running run go on past its old deadline once a continue gave it a new one', async () => {
      const run = await f.client.enqueueRun({
        entity: STEPPER,
        input: 'Work: long steps take 12000 ms',
        deadlineMs: 8000,
      });
      await waitFor(
        () => ledger(f, run.runId).includes(ledgerKey('long_step', 'started')),
        30_000,
        'the long step to start',
      );
      const continued = await f.client.continueRun(run.runId, { deadlineMs: 120_000 });
      expect(continued.action).toBe('resume');

      const done = await f.client.waitForRun(run.runId, { timeoutMs: 60_000 });
      expect(done).toMatchObject({
        status: 'COMPLETED',
        content: 'finished: long step of 12000 ms done',
      });
      expect(done.deadlineAt!.getTime()).toBeGreaterThan(run.deadlineAt!.getTime());
      // The execution that held it followed the new deadline: one attempt, the step never cut short.
      const view = (await f.client.getRun(run.runId))!;
      expect(view.attempts.map((a) => [a.worker_id, a.outcome])).toEqual([['a', 'completed']]);
      expect(ledger(f, run.runId).filter((e) => e.startsWith('long_step'))).toEqual([
        ledgerKey('long_step', 'started'),
        ledgerKey('long_step', 'finished'),
      ]);
    });

    it("stops a team's member run at the team's deadline: its tool is aborted and both runs end in ERROR", async () => {
      const run = await f.client.enqueueRun({
        entity: TEAM,
        input: LONG_INPUT,
        deadlineMs: DEADLINE_MS,
      });

      const done = await f.client.waitForRun(run.runId, { timeoutMs: 60_000 });
      expect(done.status).toBe('ERROR');
      expect(done.error?.name).toBe('DeadlineExceededError');
      const view = (await f.client.getRun(run.runId))!;
      expectMemberStoppedAtTeamDeadline(view);
      const member = view.member_runs[0]!;
      expect(ledger(f, run.runId, member.run_id)).toContain(
        ledgerKey('long_step', 'aborted:DeadlineExceededError'),
      );
      expect(ledger(f, run.runId, member.run_id)).not.toContain(ledgerKey('long_step', 'finished'));
      expect(await finalEvents(f, run.runId)).toEqual(['RunError']);
      expect(await finalEvents(f, member.run_id)).toEqual(['RunError']);
    });

    it('resumes a run ended by its deadline when continued with a new deadline_ms, and it completes; without one the continue is a 409', async () => {
      const producer = await f.spawnProducer('producer');
      const cairn = createClient({ baseUrl: producer.baseUrl });

      // No deadline_ms: the deadline is the entity's maxDurationMs, as its worker announced it.
      const created = await cairn.runs.create({
        kind: 'agent',
        name: 'bounded',
        input: LONG_INPUT,
      });
      const ended = await cairn.runs.wait(created.run_id, { timeoutMs: 60_000 });
      expect(ended.status).toBe('ERROR');
      expect(ended.error?.name).toBe('DeadlineExceededError');
      expect(Date.parse(ended.deadline_at!) - Date.parse(ended.created_at)).toBe(DEADLINE_MS);

      const refused = cairn.runs.continue(created.run_id, { input: 'Resume: 200 ms' });
      await expect(refused).rejects.toBeInstanceOf(Conflict);
      await expect(refused).rejects.toThrow(/deadline_ms/);

      const resumed = await cairn.runs.continue(created.run_id, {
        input: 'Resume: long steps take 200 ms',
        deadline_ms: 120_000,
      });
      expect(resumed.action).toBe('resume');
      const done = await cairn.runs.wait(created.run_id, { timeoutMs: 60_000 });
      expect(done).toMatchObject({
        status: 'COMPLETED',
        content: 'finished: long step of 200 ms done',
        error: null,
      });
      expect(Date.parse(done.deadline_at!)).toBeGreaterThan(Date.parse(ended.deadline_at!));
      expect(done.attempts.map((at) => [at.reason, at.outcome])).toEqual([
        ['run', 'error'],
        ['continue', 'completed'],
      ]);
      // It went on from its checkpoint: the quick step ran once, the cut-short step again, to its end.
      expect(ledger(f, created.run_id)).toEqual([
        ledgerKey('quick_step', 'finished'),
        ledgerKey('long_step', 'started'),
        ledgerKey('long_step', 'aborted:DeadlineExceededError'),
        ledgerKey('long_step', 'started'),
        ledgerKey('long_step', 'finished'),
      ]);
    });
  });

  describe('on a worker the test starts', () => {
    afterEach(() => f?.stopWorkers());

    it('ends a run still PAUSED for a person at its deadline: the reconciler ends it in ERROR and its action can no longer be decided', async () => {
      await f.spawnWorker('r', {
        CAIRN_RECONCILE_INTERVAL_MS: '250',
        CAIRN_RECONCILE_AFTER_MS: '500',
      });
      // A budget of one token pauses it before its first model request, for a person who never comes.
      const run = await f.client.enqueueRun({
        entity: STEPPER,
        input: LONG_INPUT,
        // Long enough for the worker under load to pause it first.
        deadlineMs: DEADLINE_MS,
        budget: { maxTokens: 1 },
      });
      await waitFor(
        async () => (await f.store.getRun(run.runId))?.status === 'PAUSED',
        30_000,
        'the budget pause',
      );
      const [action] = await f.client.listPendingActions(run.runId);
      expect(action).toMatchObject({ kind: 'budget', status: 'pending' });

      await waitFor(
        async () => (await f.store.getRun(run.runId))?.status === 'ERROR',
        30_000,
        'the run ended at its deadline',
      );
      const ended = (await f.store.getRun(run.runId))!;
      expect(ended.error).toMatchObject({ name: 'DeadlineExceededError' });
      expect(ended.updatedAt.getTime()).toBeGreaterThanOrEqual(run.deadlineAt!.getTime());
      expect(await finalEvents(f, run.runId)).toEqual(['RunError']);
      const actions = await f.store.listRunActions(run.runId);
      expect(actions.map((a) => [a.kind, a.status])).toEqual([['budget', 'cancelled']]);
      await expect(
        f.client.decide(run.runId, [
          { actionId: action!.actionId, decision: { type: 'approve', budget: { maxTokens: 1e6 } } },
        ]),
      ).rejects.toThrow(DecisionConflictError);
      expect(ledger(f, run.runId)).toEqual([]);
    });
  });
});

// The backends' fleets run side by side: each mostly waits out its run's deadline.
for (const backend of QUEUE_BACKENDS)
  describe.concurrent(`deadlines of dead workers (${backend})`, requiresBackend(backend), () => {
    // A fleet of its own, on this backend; its job stays locked after the test.
    let own: Fleet | undefined;
    afterEach(async () => {
      await own?.stop();
      own = undefined;
    });

    it('ends the run of a SIGKILLed worker at its deadline through the reconciler when no worker can take its job', async () => {
      own = await start(backend);
      const f = own;
      // Its job stays locked for a minute after the kill (no death signal): no other worker takes it before the deadline.
      const a = await f.spawnWorker('a', { CAIRN_LOCK_MS: '60000', CAIRN_DEATH_SIGNAL: '0' });
      const run = await f.client.enqueueRun({
        entity: STEPPER,
        input: LONG_INPUT,
        deadlineMs: DEADLINE_MS,
      });
      await waitFor(
        () => ledger(f, run.runId).includes(ledgerKey('long_step', 'started')),
        30_000,
        'the long step to start',
      );
      a.kill('SIGKILL');
      await a.exited;
      const b = await f.spawnWorker('b', {
        CAIRN_RECONCILE_INTERVAL_MS: '250',
        CAIRN_RECONCILE_AFTER_MS: '500',
      });

      const done = await f.client.waitForRun(run.runId, { timeoutMs: 60_000 });
      expect(done.status).toBe('ERROR');
      expect(done.error).toMatchObject({
        name: 'DeadlineExceededError',
        message: expect.stringContaining(`run ${run.runId} passed its deadline`),
      });
      // Left to its own worker until the deadline had passed by the grace.
      expect(done.updatedAt.getTime()).toBeGreaterThanOrEqual(run.deadlineAt!.getTime() + 500);
      await b.waitForLog('ended a run past its deadline that no execution ended');
      const view = (await f.client.getRun(run.runId))!;
      // Nobody claimed it again: the dead worker's attempt is closed with the ending.
      expect(view.attempts.map((at) => [at.worker_id, at.outcome])).toEqual([['a', 'error']]);
      expect(view.last_checkpoint_at_message_index).toBe(3);
      expect(ledger(f, run.runId).filter((e) => e.startsWith('long_step'))).toEqual([
        ledgerKey('long_step', 'started'),
      ]);
      expect(await finalEvents(f, run.runId)).toEqual(['RunError']);
      expect(b.alive).toBe(true);
    });
  });
