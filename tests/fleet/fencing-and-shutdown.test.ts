import { describe, it, type TestContext } from 'vitest';
import { requiresBackend } from '@cairn/services';
import {
  allTools,
  holderAfterMemberCheckpoint,
  holderOf,
  QUEUE_BACKENDS,
  RESEARCHER,
  startFleet,
  TEAM,
  waitFor,
} from './fleet.js';

/**
 * A fleet of its own for the test (each stops or kills a worker), stopped when it ends: workers
 * `a` and `b` (with `env`), started side by side, and a tool-batch run of `entity` enqueued on it.
 */
async function twoWorkersAndARun(
  { onTestFinished }: TestContext,
  backend: (typeof QUEUE_BACKENDS)[number],
  entity: typeof RESEARCHER | typeof TEAM,
  env: Record<string, string> = {},
) {
  const fleet = await startFleet({ backend });
  onTestFinished(() => fleet.stop());
  await Promise.all([fleet.spawnWorker('a', env), fleet.spawnWorker('b', env)]);
  const run = await fleet.client.enqueueRun({
    entity,
    input: "Research 'cairns'",
    checkpoint: 'tool-batch',
  });
  return { f: fleet, run };
}

// Each scenario's backends run side by side, each on its fleet: each mostly waits on a lock or a checkpoint.
describe('a worker SIGSTOPped past its lock', () => {
  for (const backend of QUEUE_BACKENDS)
    it.concurrent(
      `is fenced out after SIGCONT: the run completes once, on the worker that took over (${backend})`,
      requiresBackend(backend),
      async (context) => {
        const { expect } = context;
        const { f, run } = await twoWorkersAndARun(context, backend, RESEARCHER);
        let holder: string | undefined;
        let committedBeforeStop: string[] = [];
        await waitFor(
          async () => {
            const view = await f.client.getRun(run.runId);
            holder = holderOf(view);
            committedBeforeStop = (view?.tools ?? [])
              .filter((t) => t.status === 'completed')
              .map((t) => t.idempotency_key);
            return holder !== undefined && (view?.last_checkpoint_at_message_index ?? 0) >= 3;
          },
          20_000,
          'first checkpoint',
        );
        const zombie = f.workers.find((w) => w.id === holder)!;
        zombie.kill('SIGSTOP');
        await waitFor(
          async () => {
            const view = await f.client.getRun(run.runId);
            return holderOf(view) !== undefined && holderOf(view) !== zombie.id;
          },
          15_000,
          'another worker to take over',
        );
        zombie.kill('SIGCONT');
        const done = await f.client.waitForRun(run.runId, { timeoutMs: 30_000 });
        expect(done.status).toBe('COMPLETED');
        await zombie.waitForLog('lease lost', 30_000);
        // A fixed window: the claim is that the zombie, fenced out, does NOT crash afterwards.
        await new Promise((r) => setTimeout(r, 1500));
        expect(zombie.proc.exitCode).toBeNull();
        const view = (await f.client.getRun(run.runId))!;
        expect(view.attempts.filter((a) => a.outcome === 'completed')).toHaveLength(1);
        expect(view.attempts.find((a) => a.outcome === 'completed')!.worker_id).not.toBe(zombie.id);
        expect(view.attempts[1]!.reason).toBe('recovered');
        expect(view.tools.filter((t) => t.status === 'completed')).toHaveLength(4);
        const ledger = f.ledger();
        for (const key of committedBeforeStop) expect(ledger.get(key)).toBe(1);
        for (const count of ledger.values()) expect(count).toBeLessThanOrEqual(2);
        const events = await f.client.listEvents(run.runId);
        expect(events.filter((e) => e.type === 'RunCompleted')).toHaveLength(1);
      },
    );
});

// Both backends, with the death signal on: a closing worker keeps its liveness connection until it has closed, so its runs are handed over, not taken.
describe('SIGTERM during a run', () => {
  for (const backend of QUEUE_BACKENDS)
    it.concurrent(
      `hands the run over at its next checkpoint; another worker finishes it without redoing work (${backend})`,
      requiresBackend(backend),
      async (context) => {
        const { expect } = context;
        const { f, run } = await twoWorkersAndARun(context, backend, TEAM, {
          CAIRN_DEATH_SIGNAL: '1',
        });
        const leaving = await holderAfterMemberCheckpoint(f, run.runId);
        leaving.kill('SIGTERM');
        expect(await leaving.exited).toBe(0);
        const done = await f.client.waitForRun(run.runId, { timeoutMs: 30_000 });
        expect(done.status).toBe('COMPLETED');
        const view = (await f.client.getRun(run.runId))!;
        const handover = view.attempts.find((a) => a.reason === 'handover');
        expect(handover?.worker_id).toBe(f.workers.find((w) => w !== leaving)!.id);
        const ledger = f.ledger();
        for (const t of allTools(view).filter((t) => t.name !== 'delegate_task_to_member')) {
          expect(ledger.get(t.idempotency_key)).toBe(1);
        }
        expect(allTools(view).filter((t) => t.status === 'completed')).toHaveLength(5);
      },
    );
});
