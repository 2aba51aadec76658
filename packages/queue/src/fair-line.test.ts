import { randomUUID } from 'node:crypto';
import { requiresBackend, testDatabase, testRedisUrl, type TestDatabase } from '@cairn/services';
import { afterEach, describe, expect, it } from 'vitest';
import { REBASE_AFTER_SLOT, slotOfQueuePriority } from './fair-share.js';
import { RunQueue } from './queue-backend.js';

const QUEUE_BACKENDS = ['redis', 'postgres'] as const;

for (const backend of QUEUE_BACKENDS)
  describe(`the fair line on ${backend}`, requiresBackend(backend), () => {
    let database: TestDatabase | undefined;
    const queues: RunQueue[] = [];
    afterEach(async () => {
      for (const queue of queues.splice(0)) {
        await queue.queue.obliterate({ force: true }).catch(() => undefined);
        await queue.close();
      }
      await database?.drop();
      database = undefined;
    });

    /** Two producers' handles on one queue (a clock each would split a tenant's line). */
    async function openProducers(): Promise<[RunQueue, RunQueue]> {
      database = await testDatabase();
      const queueName = `test-${randomUUID()}`;
      const open = () =>
        RunQueue.open({
          backend,
          queueName,
          databaseUrl: database!.url,
          ...(backend === 'redis' && { redisUrl: testRedisUrl() }),
        });
      const pair: [RunQueue, RunQueue] = [await open(), await open()];
      queues.push(...pair);
      await pair[0].queue.pause();
      return pair;
    }

    const addRun = async (queue: RunQueue, tenant: string, priority = 5) => {
      const job = await queue.add({
        name: 'run',
        data: { runId: randomUUID(), tenant, priority },
      });
      return slotOfQueuePriority(job.opts.priority!);
    };

    it("gives two producers' runs of one tenant distinct slots in one line", async () => {
      const [a, b] = await openProducers();
      const slots = await Promise.all(
        Array.from({ length: 20 }, (_, i) => addRun(i % 2 ? a : b, 'acme')),
      );
      expect([...slots].sort((x, y) => x - y)).toEqual(Array.from({ length: 20 }, (_, i) => i));
      // Another tenant starts at the fleet's time (the first waiting slot), not behind acme's line.
      expect(await addRun(b, 'globex')).toBe(0);
    });

    it('starts the clocks again from 0 once nothing waits past the rebase slot', async () => {
      const [queue] = await openProducers();
      // A tenant far along its clock: enough runs to pass the rebase slot at weight 1 would be slow, so weight it low.
      const far = await RunQueue.open({
        backend,
        queueName: queue.name,
        databaseUrl: database!.url,
        ...(backend === 'redis' && { redisUrl: testRedisUrl() }),
        tenantWeights: { slow: 1 / (REBASE_AFTER_SLOT + 1) },
      });
      queues.push(far);
      expect(await addRun(far, 'slow')).toBe(0);
      expect(await addRun(far, 'slow')).toBe(REBASE_AFTER_SLOT + 1);
      // While runs wait, a newcomer starts at the first waiting slot.
      expect(await addRun(queue, 'acme')).toBe(0);
      await queue.queue.drain();
      expect(await queue.queue.getPrioritizedCount()).toBe(0);
      // Nothing waits and the clocks passed the rebase slot: everyone starts again at 0.
      expect(await addRun(far, 'slow')).toBe(0);
      expect(await addRun(queue, 'acme')).toBe(0);
    });
  });
