import { readFileSync, existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createClient } from '@cairn/client';
import { RunNotContinuableError } from '@cairn/engine';
import { RunAlreadyTerminalError } from '@cairn/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requiresBackend } from '@cairn/services';
import { QUEUE_BACKENDS, startFleet, waitFor, type Fleet } from './fleet.js';

const SUSPEND_REGISTRY = fileURLToPath(new URL('./suspend-registry.ts', import.meta.url));
const WAITER = { kind: 'agent', name: 'waiter' } as const;
const FLAKY = { kind: 'agent', name: 'flaky' } as const;
const WAIT_TEAM = { kind: 'team', name: 'wait-team' } as const;
/** The short wait a worker runs `long_wait` with when a test lets it finish. */
const SHORT_WAIT = { SUSPEND_WAIT_MS: '200' };

/** The fleet of the backend whose scenarios run now (each backend's describe starts its own). */
let fleet: Fleet;

/** How many times each tool ran for the runs whose ids start with one of `runIds` (the ledger's lines: tool, key). */
function executions(runIds: readonly string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  if (!existsSync(fleet.ledgerFile)) return counts;
  for (const line of readFileSync(fleet.ledgerFile, 'utf8').split('\n').filter(Boolean)) {
    const [tool, key] = line.split('\t') as [string, string];
    if (runIds.some((id) => key.startsWith(id))) counts[tool] = (counts[tool] ?? 0) + 1;
  }
  return counts;
}

async function waitForStatus(runId: string, status: string, what: string): Promise<void> {
  await waitFor(
    async () => (await fleet.client.getRunStatus(runId)) === status,
    60_000,
    `${what} (${status})`,
  );
}

async function eventsOf(runId: string, type: string) {
  return fleet.client.listEventsOfTypes(runId, [type]);
}

/** The attempts case starts three workers one after the other: each start takes its time on a loaded machine. */
const THREE_WORKER_STARTS_MS = 120_000;

for (const backend of QUEUE_BACKENDS)
  describe(`suspend and resume (${backend})`, requiresBackend(backend), () => {
    beforeAll(async () => {
      // A short lock, so that a SIGKILLed worker's run is taken over soon.
      fleet = await startFleet({
        backend,
        registryModule: SUSPEND_REGISTRY,
        lockMs: 1000,
        stalledIntervalMs: 250,
      });
    });
    afterAll(async () => {
      await fleet?.stop();
    });

    it('suspends a running run at its next checkpoint boundary (the batch in flight completes and commits once), and resumes it once to COMPLETED', async () => {
      await fleet.stopWorkers();
      await fleet.spawnWorker('a', { SUSPEND_WAIT_MS: '2500' });
      const producer = await fleet.spawnProducer('producer');
      const cairn = createClient({ baseUrl: producer.baseUrl });
      const run = await fleet.client.enqueueRun({ entity: WAITER, input: 'wait' });
      await waitFor(
        () => (executions([run.runId]).long_wait_started ?? 0) === 1,
        60_000,
        'the long wait to start',
      );
      const asked = await cairn.runs.suspend(run.runId);
      expect(asked).toMatchObject({ suspend: 'requested', action_id: null });
      await waitForStatus(run.runId, 'PAUSED', 'the run to stop at its boundary');

      const paused = (await fleet.client.getRun(run.runId))!;
      // The batch in flight finished and was committed once; nothing runs past the boundary.
      expect(executions([run.runId])).toEqual({
        quick_step: 1,
        long_wait_started: 1,
        long_wait: 1,
      });
      expect(paused.tools.map((t) => [t.name, t.status])).toEqual([
        ['quick_step', 'completed'],
        ['long_wait', 'completed'],
      ]);
      expect(paused.pending_actions).toHaveLength(1);
      const action = paused.pending_actions[0]!;
      expect(action).toMatchObject({
        kind: 'suspended',
        status: 'pending',
        args: { reason: 'operator' },
      });
      const [suspended] = await eventsOf(run.runId, 'RunSuspended');
      expect(suspended?.data).toMatchObject({ reason: 'operator', action_id: action.action_id });
      // The worker slot is given back: the job completes once its finish is written (a moment after
      // the status, on a loaded machine).
      await waitFor(
        async () => !(await fleet.runQueueLiveJob(run.runId)),
        30_000,
        'the suspended run to hold no job',
      );
      // A suspension already waiting: asking again changes nothing.
      expect(await cairn.runs.suspend(run.runId)).toMatchObject({
        suspend: 'already',
        action_id: action.action_id,
      });

      const resumed = await cairn.runs.resume(run.runId);
      expect(resumed).toMatchObject({ resumed: true, action_id: action.action_id });
      const again = await cairn.runs.resume(run.runId);
      expect(again).toMatchObject({ resumed: false, action_id: action.action_id });
      await waitForStatus(run.runId, 'COMPLETED', 'the resumed run to finish');

      const done = (await fleet.client.getRun(run.runId))!;
      expect(done.run_id).toBe(run.runId);
      expect(done.content).toBe('waited long enough');
      expect(executions([run.runId])).toEqual({
        quick_step: 1,
        long_wait_started: 1,
        long_wait: 1,
      });
      expect(done.attempts.map((a) => [a.worker_id, a.reason])).toEqual([
        ['a', 'run'],
        ['a', 'continue'],
      ]);
      expect(await eventsOf(run.runId, 'RunContinued')).toHaveLength(1);
      // Resumed before, finished since: the same resume is still a no-op.
      expect(await cairn.runs.resume(run.runId)).toMatchObject({ resumed: false });
    });

    it('with now: true aborts the call in flight through its signal; after a SIGKILL of its worker, a resume on another worker runs only that call again', async () => {
      await fleet.stopWorkers();
      const first = await fleet.spawnWorker('b');
      const run = await fleet.client.enqueueRun({ entity: WAITER, input: 'wait' });
      await waitFor(
        () => (executions([run.runId]).long_wait_started ?? 0) === 1,
        60_000,
        'the long wait to start',
      );
      const asked = await fleet.client.suspendRun(run.runId, { now: true });
      expect(asked.kind).toBe('requested');
      // The wait lasts 60 s: PAUSED well before it only if the tool followed its signal.
      await waitFor(
        async () => (await fleet.client.getRunStatus(run.runId)) === 'PAUSED',
        30_000,
        'the run to stop at once',
      );
      expect(executions([run.runId])).toEqual({
        quick_step: 1,
        long_wait_started: 1,
        long_wait_aborted: 1,
      });
      const paused = (await fleet.client.getRun(run.runId))!;
      // PAUSED at its last checkpoint: the aborted call's turn is not committed.
      expect(paused.tools.map((t) => t.name)).toEqual(['quick_step']);
      expect(paused.pending_actions).toMatchObject([
        { kind: 'suspended', args: { reason: 'operator', now: true } },
      ]);

      first.kill('SIGKILL');
      await first.exited;
      await fleet.spawnWorker('c', SHORT_WAIT);
      expect((await fleet.client.resumeRun(run.runId)).kind).toBe('resumed');
      await waitForStatus(run.runId, 'COMPLETED', 'the resumed run to finish');
      // The committed step never ran again; the aborted call ran again, to its end.
      expect(executions([run.runId])).toEqual({
        quick_step: 1,
        long_wait_started: 2,
        long_wait_aborted: 1,
        long_wait: 1,
      });
      const done = (await fleet.client.getRun(run.runId))!;
      expect(done.attempts.map((a) => a.worker_id)).toEqual(['b', 'c']);
    });

    it('a suspend asked for just before its worker is SIGKILLed is taken by the next claim: the run stops at its last checkpoint, nothing run again', async () => {
      await fleet.stopWorkers();
      const first = await fleet.spawnWorker('i');
      const run = await fleet.client.enqueueRun({ entity: WAITER, input: 'wait' });
      await waitFor(
        () => (executions([run.runId]).long_wait_started ?? 0) === 1,
        60_000,
        'the long wait to start',
      );
      expect((await fleet.client.suspendRun(run.runId)).kind).toBe('requested');
      first.kill('SIGKILL');
      await first.exited;
      await fleet.spawnWorker('j', SHORT_WAIT);
      await waitForStatus(run.runId, 'PAUSED', 'the recovered run to stop at once');
      // The recovery claimed it, read the request and paused before running anything.
      expect(executions([run.runId])).toEqual({ quick_step: 1, long_wait_started: 1 });
      const paused = (await fleet.client.getRun(run.runId))!;
      expect(paused.attempts.map((a) => [a.worker_id, a.outcome])).toEqual([
        ['i', 'superseded'],
        ['j', 'paused'],
      ]);
      expect(paused.pending_actions).toMatchObject([{ kind: 'suspended' }]);
      expect((await fleet.client.resumeRun(run.runId)).kind).toBe('resumed');
      await waitForStatus(run.runId, 'COMPLETED', 'the resumed run to finish');
      expect(executions([run.runId])).toEqual({
        quick_step: 1,
        long_wait_started: 2,
        long_wait: 1,
      });
    });

    it('suspends a queued run at once (its job removed), refuses a finished one, and resumes only a suspended one', async () => {
      await fleet.stopWorkers();
      const run = await fleet.client.enqueueRun({ entity: WAITER, input: 'wait' });
      const suspended = await fleet.client.suspendRun(run.runId);
      expect(suspended).toMatchObject({ kind: 'suspended', run: { status: 'PAUSED' } });
      expect(await fleet.runQueueLiveJob(run.runId)).toBe(false);
      await expect(fleet.client.resumeRun(run.runId)).resolves.toMatchObject({ kind: 'resumed' });
      expect(await fleet.runQueueLiveJob(run.runId)).toBe(true);
      await fleet.spawnWorker('d', SHORT_WAIT);
      await waitForStatus(run.runId, 'COMPLETED', 'the resumed run to finish');
      // Its first execution is the resume's continue job, never the removed run job (reason `run`).
      // Only the first: a worker starved past its 2 s lock (two suites at once) has its job taken
      // back by the stall check, which adds a `recovered` attempt that says nothing of the suspend.
      const reasons = (await fleet.client.getRun(run.runId))!.attempts.map((a) => a.reason);
      expect(reasons[0]).toBe('continue');
      expect(reasons).not.toContain('run');
      await expect(fleet.client.suspendRun(run.runId)).rejects.toThrow(RunAlreadyTerminalError);

      const never = await fleet.client.enqueueRun({ entity: WAITER, input: 'wait' });
      await waitForStatus(never.runId, 'COMPLETED', 'a run never suspended to finish');
      await expect(fleet.client.resumeRun(never.runId)).rejects.toThrow(RunNotContinuableError);
    });

    it("a member's suspension suspends its team; resuming the team resumes the member first", async () => {
      await fleet.stopWorkers();
      await fleet.spawnWorker('e', { SUSPEND_WAIT_MS: '2500' });
      const team = await fleet.client.enqueueRun({ entity: WAIT_TEAM, input: 'go' });
      let memberId = '';
      await waitFor(
        async () => {
          memberId = (await fleet.client.getRun(team.runId))?.member_runs[0]?.run_id ?? '';
          return memberId !== '' && (executions([memberId]).long_wait_started ?? 0) === 1;
        },
        60_000,
        "the member's long wait to start",
      );
      expect((await fleet.client.suspendRun(memberId)).kind).toBe('requested');
      await waitForStatus(team.runId, 'PAUSED', 'the team to pause with its member');
      const view = (await fleet.client.getRun(team.runId))!;
      expect(view.member_runs[0]!.status).toBe('PAUSED');
      expect(view.pending_actions).toMatchObject([
        { kind: 'suspended', run_id: memberId, member_path: ['wait-team', 'waiter'] },
      ]);
      expect((await fleet.client.resumeRun(team.runId)).kind).toBe('resumed');
      await waitForStatus(team.runId, 'COMPLETED', 'the team to finish');
      expect((await fleet.client.getRun(team.runId))!.content).toBe('team: waited long enough');
      expect(executions([memberId])).toEqual({ quick_step: 1, long_wait_started: 1, long_wait: 1 });
    });

    it(
      'CAIRN_ON_ATTEMPTS_EXHAUSTED=suspend: a run that crashed through its attempts waits suspended, and its resume on a fixed worker gets a fresh allowance',
      async () => {
        await fleet.stopWorkers();
        const capped = { CAIRN_MAX_ATTEMPTS: '1', CAIRN_ON_ATTEMPTS_EXHAUSTED: 'suspend' };
        const crashing = await fleet.spawnWorker('f', capped);
        const run = await fleet.client.enqueueRun({ entity: FLAKY, input: 'try' });
        await crashing.exited;
        await fleet.spawnWorker('g', capped);
        await waitForStatus(run.runId, 'PAUSED', 'the run to be suspended past its attempts');
        const paused = (await fleet.client.getRun(run.runId))!;
        expect(paused.error).toBeNull();
        expect(paused.pending_actions).toMatchObject([
          { kind: 'suspended', args: { reason: 'attempts_exhausted' } },
        ]);
        const [event] = await eventsOf(run.runId, 'RunSuspended');
        expect(event?.data).toMatchObject({ reason: 'attempts_exhausted' });
        expect(executions([run.runId])).toEqual({ flaky_step: 1 });

        // The fix deployed: a worker that survives the step, with the same cap of one attempt.
        await fleet.stopWorkers();
        await fleet.spawnWorker('h', { ...capped, SUSPEND_FIXED: '1' });
        expect((await fleet.client.resumeRun(run.runId)).kind).toBe('resumed');
        await waitForStatus(run.runId, 'COMPLETED', 'the resumed run to finish');
        const done = (await fleet.client.getRun(run.runId))!;
        expect(done.content).toBe('it worked');
        expect(done.attempts.map((a) => a.worker_id)).toEqual(['f', 'g', 'h']);
        expect(executions([run.runId])).toEqual({ flaky_step: 2 });
      },
      THREE_WORKER_STARTS_MS,
    );
  });
