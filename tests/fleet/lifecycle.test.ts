import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, type TestContext } from 'vitest';
import { ContinuePendingError } from '@cairn/engine';
import { reconcileOnce } from '@cairn/queue';
import { FLEET_BACKEND, holderOf, startFleet, waitFor, type Fleet } from './fleet.js';

const LIFECYCLE_REGISTRY = fileURLToPath(new URL('./lifecycle-registry.ts', import.meta.url));
const ECHO = { kind: 'agent', name: 'echo' } as const;

/** The file's fleets: its registry, and a short lock so that a SIGKILLed worker's run is taken over soon. */
function startLifecycleFleet(): Promise<Fleet> {
  return startFleet({
    backend: FLEET_BACKEND,
    registryModule: LIFECYCLE_REGISTRY,
    lockMs: 1000,
    stalledIntervalMs: 250,
  });
}

/** A fleet of the test's own (it SIGKILLs workers), stopped when the test ends. */
async function ownFleet({ onTestFinished }: TestContext): Promise<Fleet> {
  const fleet = await startLifecycleFleet();
  onTestFinished(() => fleet.stop());
  return fleet;
}

/** Starts the named workers side by side, with the same settings. */
async function spawnWorkers(
  f: Fleet,
  names: string[],
  env?: Record<string, string>,
): Promise<void> {
  await Promise.all(names.map((name) => f.spawnWorker(name, env)));
}

function userMessages(view: { messages: { role: string; content?: unknown }[] }): unknown[] {
  return view.messages.filter((m) => m.role === 'user').map((m) => m.content);
}

async function killHolder(f: Fleet, runId: string): Promise<void> {
  const holder = holderOf(await f.client.getRun(runId));
  const victim = f.workers.find((w) => w.id === holder && w.alive)!;
  victim.kill('SIGKILL');
  await victim.exited;
}

describe(`the run lifecycle under real workers (${FLEET_BACKEND})`, () => {
  // One database, queue, client and worker for these (runs are independent by id).
  describe('on one worker that no test kills', () => {
    let f: Fleet;
    beforeAll(async () => {
      f = await startLifecycleFleet();
    });
    afterAll(() => f?.stop());
    // The short grace is for the ghost entity's run; the other runs' entities are all known.
    beforeAll(async () => {
      await f.spawnWorker('a', { CAIRN_VERSION_GRACE_MS: '300' });
    });
    afterAll(() => f?.stopWorkers());

    it('ends a run whose entity no worker has in ERROR after the grace period, in one claim; the reconciler leaves it; a continue by hand is accepted', async () => {
      const ghost = await f.store.createRun({
        entity: { kind: 'agent', name: 'ghost' },
        input: 'hello',
        checkpoint: 'tool-batch',
      });
      await f.client.runQueue.add({ name: 'run', data: { runId: ghost.runId } });
      const done = await f.client.waitForRun(ghost.runId, { timeoutMs: 30_000 });
      expect(done.status).toBe('ERROR');
      expect(done.error).toMatchObject({
        name: 'EntityNotFoundError',
        message: expect.stringContaining('"ghost"'),
      });
      const view = (await f.client.getRun(ghost.runId))!;
      expect(view.attempts).toHaveLength(1);
      expect(view.attempts[0]).toMatchObject({ worker_id: 'a', outcome: 'error' });
      const reconciled = await reconcileOnce({
        store: f.store,
        runQueue: f.client.runQueue,
        olderThanMs: 0,
      });
      expect(reconciled.enqueued).not.toContain(ghost.runId);
      expect((await f.client.continueRun(ghost.runId)).action).toBe('resume');
      // Its execution ends the same way, in one more claim (and leaves no job to the next test's workers).
      await waitFor(
        async () => {
          const attempts = (await f.client.getRun(ghost.runId))?.attempts ?? [];
          return attempts.length === 2 && attempts[1]!.ended_at !== null;
        },
        30_000,
        'the continue to end',
      );
      const resumed = (await f.client.getRun(ghost.runId))!;
      expect(resumed.status).toBe('ERROR');
      expect(resumed.attempts[1]).toMatchObject({ worker_id: 'a', outcome: 'error' });
      expect(resumed.error).toMatchObject({ name: 'EntityNotFoundError' });
    });

    it('applies one input of two continues racing on a running run; the other is refused, nothing is lost silently', async () => {
      const run = await f.client.enqueueRun({
        entity: ECHO,
        input: 'first',
        checkpoint: 'tool-batch',
      });
      await waitFor(
        async () => (await f.client.getRunStatus(run.runId)) === 'RUNNING',
        20_000,
        'the run to start',
      );
      const results = await Promise.allSettled([
        f.client.continueRun(run.runId, { input: 'left' }),
        f.client.continueRun(run.runId, { input: 'right' }),
      ]);
      const accepted = results.filter((r) => r.status === 'fulfilled');
      const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      expect(accepted).toHaveLength(1);
      expect(refused).toHaveLength(1);
      expect(refused[0]!.reason).toBeInstanceOf(ContinuePendingError);
      const done = await f.client.waitForRun(run.runId, { timeoutMs: 30_000 });
      const view = (await f.client.getRun(run.runId))!;
      const applied = userMessages(view).filter((m) => m === 'left' || m === 'right');
      expect(applied).toHaveLength(1);
      // The continue arrived while the run was running: its completion took the input in and answered it.
      expect(done.status).toBe('COMPLETED');
      expect(done.content).toBe(`answered: ${String(applied[0])}`);
    });
  });

  // Side by side, each on a fleet of its own with the workers it starts: each mostly waits on its run.
  describe.concurrent('on workers the test starts, one or more of them SIGKILLed', () => {
    it('ends a run that crashes its worker at the same point every time in ERROR once it passes CAIRN_MAX_ATTEMPTS claims', async (context) => {
      const { expect } = context;
      const f = await ownFleet(context);
      const run = await f.client.enqueueRun({
        entity: { kind: 'agent', name: 'crasher' },
        input: 'go',
        checkpoint: 'tool-batch',
      });
      // One worker per claim, started together: the first two die in the tool, the third ends the run.
      await spawnWorkers(f, ['w1', 'w2', 'w3'], { CAIRN_MAX_ATTEMPTS: '2' });
      await f.client.waitForRun(run.runId, { timeoutMs: 45_000 });
      const view = (await f.client.getRun(run.runId))!;
      expect(view.status).toBe('ERROR');
      expect(view.error).toMatchObject({
        name: 'AttemptsExhaustedError',
        message: expect.stringContaining('CAIRN_MAX_ATTEMPTS=2'),
      });
      expect(view.attempts).toHaveLength(3);
      expect(
        [...f.ledger().entries()]
          .filter(([key]) => key.startsWith(run.runId))
          .reduce((sum, [, count]) => sum + count, 0),
      ).toBe(2);
    });

    it('answers a continue whose worker is SIGKILLed before its first checkpoint, once', async (context) => {
      const { expect } = context;
      const f = await ownFleet(context);
      await spawnWorkers(f, ['a', 'b']);
      const run = await f.client.enqueueRun({
        entity: ECHO,
        input: 'first',
        checkpoint: 'tool-batch',
      });
      expect((await f.client.waitForRun(run.runId, { timeoutMs: 30_000 })).content).toBe(
        'answered: first',
      );
      const before = (await f.client.getRun(run.runId))!.last_checkpoint_at_message_index;
      // A COMPLETED run forks; an ERROR run resumes in place: end it as a failed model turn would.
      await f.store.db
        .updateTable('runs')
        .set({ status: 'ERROR' })
        .where('run_id', '=', run.runId)
        .execute();
      await f.client.continueRun(run.runId, { input: 'second' });
      await waitFor(
        async () =>
          (await f.client.getRun(run.runId))?.attempts.some(
            (a) => a.reason === 'continue' && a.ended_at === null,
          ) ?? false,
        20_000,
        'the continue to start',
      );
      expect((await f.client.getRun(run.runId))!.last_checkpoint_at_message_index).toBe(before);
      await killHolder(f, run.runId);
      const done = await f.client.waitForRun(run.runId, { timeoutMs: 30_000 });
      expect(done.status).toBe('COMPLETED');
      expect(done.content).toBe('answered: second');
      const view = (await f.client.getRun(run.runId))!;
      expect(userMessages(view)).toEqual(['first', 'second']);
      expect(view.attempts.map((a) => a.reason)).toEqual(['run', 'continue', 'recovered']);
    });

    it('answers a continue taken in by a resume that is SIGKILLed after re-running the interrupted call, once', async (context) => {
      const { expect } = context;
      const f = await ownFleet(context);
      // tool-call mode: the model's call is stored before it runs, so a resume re-runs it and commits its result first.
      const env = { LIFECYCLE_STEP_MS: '2500', LIFECYCLE_MODEL_MS: '1500' };
      // Three workers: two are SIGKILLed in turn, the third finishes the run.
      await spawnWorkers(f, ['a', 'b', 'c'], env);
      const run = await f.client.enqueueRun({
        entity: ECHO,
        input: 'first',
        checkpoint: 'tool-call',
      });
      const indexOf = async () =>
        (await f.client.getRun(run.runId))!.last_checkpoint_at_message_index;
      await waitFor(
        async () => (await indexOf()) >= 2,
        20_000,
        'the first call to be stored before it runs',
      );
      await f.client.continueRun(run.runId, { input: 'second' });
      // The holder dies in that call; the next execution takes the input in, re-runs the call and commits its result...
      await killHolder(f, run.runId);
      await waitFor(async () => (await indexOf()) >= 3, 20_000, 'the re-run call to be committed');
      // ...and dies in its next model turn, before the input was committed with it.
      await killHolder(f, run.runId);
      const done = await f.client.waitForRun(run.runId, { timeoutMs: 40_000 });
      expect(done.status).toBe('COMPLETED');
      expect(done.content).toBe('answered: second');
      const view = (await f.client.getRun(run.runId))!;
      expect(userMessages(view)).toEqual(['first', 'second']);
      expect(view.attempts.map((a) => a.reason)).toEqual(['run', 'recovered', 'recovered']);
    });

    it('completes a team with two parallel delegations to the same member, SIGKILLed mid-way, with each member run used once', async (context) => {
      const { expect } = context;
      const f = await ownFleet(context);
      await spawnWorkers(f, ['a', 'b']);
      const run = await f.client.enqueueRun({
        entity: { kind: 'team', name: 'pair-team' },
        input: 'pair',
        checkpoint: 'tool-batch',
      });
      await waitFor(
        async () => (await f.client.getRun(run.runId))?.member_runs.length === 2,
        20_000,
        'both delegations to start',
      );
      await killHolder(f, run.runId);
      const done = await f.client.waitForRun(run.runId, { timeoutMs: 45_000 });
      expect(done.status).toBe('COMPLETED');
      expect(done.content).toBe('answered: task A | answered: task B');
      const view = (await f.client.getRun(run.runId))!;
      expect(view.member_runs).toHaveLength(2);
      const delegations = view.tools.filter((t) => t.name === 'delegate_task_to_member');
      expect(delegations).toHaveLength(2);
      expect(delegations.every((t) => t.status === 'completed')).toBe(true);
      expect(new Set(delegations.map((t) => t.child_run_id))).toEqual(
        new Set(view.member_runs.map((m) => m.run_id)),
      );
      for (const member of view.member_runs) expect(member.status).toBe('COMPLETED');
    });
  });
});
