import { afterEach, describe, expect, it } from 'vitest';
import { hasTestRedis } from '@cairn/services';
import {
  allTools,
  holderOf,
  QUEUE_BACKENDS,
  RESEARCHER,
  startFleet,
  waitFor,
  type Fleet,
} from './fleet.js';

/**
 * Far longer than the run's recovery may take: a takeover before it comes from
 * the death signal, not from the lock. (A live worker whose execution thread
 * blocks keeps its run: tests/fleet/event-loop-block.test.ts, with the signal on.)
 */
const LOCK_MS = 30_000;

const backends = QUEUE_BACKENDS.filter((backend) => backend !== 'redis' || hasTestRedis());

describe.each(backends)("a dead worker's run resumes before its lock expires (%s)", (backend) => {
  let fleet: Fleet | undefined;
  afterEach(async () => {
    await fleet?.stop();
    fleet = undefined;
  });

  it('SIGKILL: the survivor sees the connection close, releases the lock and resumes the run, same run id', async () => {
    fleet = await startFleet({ backend, lockMs: LOCK_MS });
    await fleet.spawnWorker('a', { CAIRN_DEATH_SIGNAL: '1' });
    const survivor = await fleet.spawnWorker('b', { CAIRN_DEATH_SIGNAL: '1' });
    const run = await fleet.client.enqueueRun({
      entity: RESEARCHER,
      input: "Research 'cairns'",
      checkpoint: 'tool-batch',
    });
    let holder: string | undefined;
    await waitFor(
      async () => {
        const view = await fleet!.client.getRun(run.runId);
        holder = holderOf(view);
        return holder !== undefined && (view?.last_checkpoint_at_message_index ?? 0) >= 3;
      },
      20_000,
      'the first checkpoint',
    );
    const victim = fleet.workers.find((w) => w.id === holder)!;
    const killedAt = Date.now();
    victim.kill('SIGKILL');
    await victim.exited;

    const done = await fleet.client.waitForRun(run.runId, { timeoutMs: 25_000 });
    expect(done.status).toBe('COMPLETED');
    const view = (await fleet.client.getRun(run.runId))!;
    const recovered = view.attempts.find((a) => a.reason === 'recovered')!;
    expect(recovered.worker_id).not.toBe(victim.id);
    // Resumed long before the victim's lock could have expired.
    expect(new Date(recovered.started_at).getTime() - killedAt).toBeLessThan(LOCK_MS / 2);
    const finder = victim.id === 'a' ? survivor : fleet.workers.find((w) => w.id === 'a')!;
    await finder.waitForLog("a worker's connection closed");
    expect(allTools(view).filter((t) => t.name === 'slow_search')).toHaveLength(1);
  });
});
