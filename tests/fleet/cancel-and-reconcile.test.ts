import { afterEach, describe, expect, it } from 'vitest';
import { reconcileOnce } from '@cairn/queue';
import { requiresBackend } from '@cairn/services';
import {
  FLEET_BACKEND,
  holderOf,
  QUEUE_BACKENDS,
  RESEARCHER,
  startFleet,
  TEAM,
  waitFor,
  type Fleet,
} from './fleet.js';

let fleet: Fleet | undefined;
afterEach(async () => {
  await fleet?.stop();
  fleet = undefined;
});

for (const backend of QUEUE_BACKENDS)
  describe(`cancel (${backend})`, requiresBackend(backend), () => {
    it('cancels a queued run without running it, and a running team run through its worker', async () => {
      fleet = await startFleet({ backend });
      const f = fleet;
      const queued = await f.client.enqueueRun({ entity: RESEARCHER, input: "Research 'a'" });
      expect((await f.client.cancelRun(queued.runId)).status).toBe('CANCELLED');
      expect(await f.runQueueLiveJob(queued.runId)).toBe(false);

      await f.spawnWorker('a');
      const running = await f.client.enqueueRun({
        entity: TEAM,
        input: "Research 'b'",
        checkpoint: 'tool-batch',
      });
      await waitFor(
        async () => (await f.client.getRun(running.runId))?.member_runs.length === 1,
        20_000,
        'the member to start',
      );
      const startedCancel = Date.now();
      const cancelled = await f.client.cancelRun(running.runId);
      expect(cancelled.status).toBe('CANCELLED');
      expect(Date.now() - startedCancel).toBeLessThan(4000);
      const view = (await f.client.getRun(running.runId))!;
      expect(view.attempts.at(-1)!.outcome).toBe('cancelled');
      expect(view.member_runs[0]!.status).toBe('CANCELLED');
      expect((await f.client.getRun(queued.runId))!.attempts).toHaveLength(0);
    });

    it('cancels a run whose worker is dead', async () => {
      fleet = await startFleet({ backend });
      const f = fleet;
      const worker = await f.spawnWorker('a');
      const run = await f.client.enqueueRun({
        entity: RESEARCHER,
        input: "Research 'c'",
        checkpoint: 'tool-batch',
      });
      await waitFor(
        async () => holderOf(await f.client.getRun(run.runId)) === 'a',
        20_000,
        'the run to start',
      );
      worker.kill('SIGKILL');
      await worker.exited;
      expect((await f.client.cancelRun(run.runId)).status).toBe('CANCELLED');
      const next = await f.spawnWorker('b');
      // The dead worker's job reaches the new worker, which skips the cancelled run.
      await next.waitForLog('"outcome":{"kind":"skipped","status":"CANCELLED"}', 30_000);
      const view = (await f.client.getRun(run.runId))!;
      expect(view.status).toBe('CANCELLED');
      expect(view.attempts.map((a) => a.worker_id)).toEqual(['a']);
    });
  });

describe(`reconciler (${FLEET_BACKEND})`, () => {
  it('executes a PENDING run that has no job', async () => {
    fleet = await startFleet({ backend: FLEET_BACKEND });
    const f = fleet;
    await f.spawnWorker('a');
    const orphan = await f.store.createRun({
      entity: RESEARCHER,
      input: "Research 'd'",
      checkpoint: 'tool-batch',
    });
    const first = await reconcileOnce({
      store: f.store,
      runQueue: f.client.runQueue,
      olderThanMs: 0,
    });
    expect(first.enqueued).toEqual([orphan.runId]);
    const again = await reconcileOnce({
      store: f.store,
      runQueue: f.client.runQueue,
      olderThanMs: 0,
    });
    expect(again.enqueued).toEqual([]);
    const done = await f.client.waitForRun(orphan.runId, { timeoutMs: 30_000 });
    expect(done.status).toBe('COMPLETED');
    const view = (await f.client.getRun(orphan.runId))!;
    expect(view.attempts.map((a) => a.reason)).toEqual(['reconciled']);
  });
});
