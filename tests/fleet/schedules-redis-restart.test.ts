/**
 * Schedules across a Redis restart (docs/schedules-and-webhooks.md and docs/operations.md, "Schedules"): a worker and a
 * producer on a Redis of the test's own (append-only file, so a restart keeps the job scheduler and
 * its next firing job); an interval schedule at the documented minimum fires while Redis is shut
 * down and started again. Firing times stay on the interval's grid; a slot is missing only if the
 * outage outlasted it, as documented ("What is not caught up"): the firing due during the outage
 * is taken late, and only the slots after it that passed before it was taken are gone (none on a
 * quiet machine, where the restart takes a fraction of the interval). Each started firing made one
 * run, and no run is made twice.
 */
import { createClient } from '@cairn/client';
import { FINAL_STATUSES } from '@cairn/engine';
import { MIN_SCHEDULE_EVERY_MS, ScheduleQueue } from '@cairn/queue';
import { requiresRedis, startRedis, type RedisService } from '@cairn/services';
import { describe, it, type TestContext } from 'vitest';
import { RESEARCHER, startFleet, waitFor } from './fleet.js';
import { firingsOf, waitForNoFiringJob } from './schedule-firings.js';

const CASE_TIMEOUT_MS = 120_000;

describe('schedules across a Redis restart', requiresRedis(), () => {
  it(
    'an interval schedule at the minimum keeps firing: no firing time lost, none doubled',
    { timeout: CASE_TIMEOUT_MS },
    async ({ expect, onTestFinished }: TestContext) => {
      const redis: RedisService = (await startRedis({ ignoreEnv: true, appendonly: true }))!;
      onTestFinished(() => redis.stop());
      const fleet = await startFleet({
        backend: 'redis',
        redisUrl: redis.url,
        toolDelayMs: 50,
        lockMs: 5_000,
        stalledIntervalMs: 1_000,
      });
      onTestFinished(() => fleet.stop());
      const schedules = await ScheduleQueue.open({
        redisUrl: redis.url,
        queueName: fleet.client.runQueue.name,
      });
      onTestFinished(() => schedules.close());
      const [, producer] = await Promise.all([fleet.spawnWorker('a'), fleet.spawnProducer('p')]);
      const cairn = createClient({ baseUrl: producer.baseUrl });
      const { schedule_id: scheduleId } = await cairn.schedules.create({
        entity: RESEARCHER,
        input: "Research 'cairns'",
        every_ms: MIN_SCHEDULE_EVERY_MS,
        overlap: 'allow',
      });
      const started = async () =>
        (await firingsOf(fleet, scheduleId)).filter((f) => f.run_id !== null).length;
      await waitFor(async () => (await started()) >= 3, 60_000, 'three started firings');

      const before = await started();
      const restartedAt = Date.now();
      await redis.restart();
      const restartMs = Date.now() - restartedAt;
      await waitFor(
        async () => (await started()) >= before + 4,
        60_000,
        'four more started firings after the restart',
        producer.exited,
      );

      expect((await cairn.schedules.update(scheduleId, { paused: true })).paused).toBe(true);
      await waitForNoFiringJob(schedules);
      const firings = await firingsOf(fleet, scheduleId);
      const gaps = firings
        .slice(1)
        .map((f, i) => f.fire_time.getTime() - firings[i]!.fire_time.getTime());
      console.log(
        `schedules across a Redis restart (${restartMs} ms): ${firings.length} firings, ms between firings ${gaps.join(' ')}`,
      );
      // On the grid: every firing a whole number of intervals after the one before.
      expect(
        gaps.every((gap) => gap > 0 && gap % MIN_SCHEDULE_EVERY_MS === 0),
        gaps.join(' '),
      ).toBe(true);
      expect(firings.some((f) => f.fire_time.getTime() > restartedAt + restartMs)).toBe(true);
      // None lost but to the outage: a slot is skipped only when the firing before it was taken
      // after that slot had passed (late, because Redis was down), so that firing was recorded at
      // or after the missing slot, and after the restart began.
      const fired = new Set(firings.map((f) => f.fire_time.getTime()));
      for (
        let slot = firings[0]!.fire_time.getTime();
        slot < firings.at(-1)!.fire_time.getTime();
        slot += MIN_SCHEDULE_EVERY_MS
      ) {
        if (fired.has(slot)) continue;
        const before = firings.findLast((f) => f.fire_time.getTime() < slot)!;
        expect(before.recorded_at.getTime(), `slot ${slot} missing`).toBeGreaterThanOrEqual(slot);
        expect(before.recorded_at.getTime(), `slot ${slot} missing`).toBeGreaterThan(restartedAt);
      }
      // None doubled: each firing started one run of its own, and the schedule made no other run.
      expect(firings.every((f) => f.outcome === 'started' && f.run_id !== null)).toBe(true);
      const runIds = firings.map((f) => f.run_id!);
      expect(new Set(runIds).size).toBe(firings.length);
      const { count } = await fleet.store.db
        .selectFrom('runs')
        .select((eb) => eb.fn.countAll<string>().as('count'))
        .executeTakeFirstOrThrow();
      expect(Number(count)).toBe(firings.length);
      await waitFor(
        async () => {
          const statuses = await Promise.all(
            runIds.map(async (id) => (await fleet.client.getRunStatus(id))!),
          );
          return statuses.every((s) => FINAL_STATUSES.includes(s));
        },
        60_000,
        'every scheduled run finished',
      );
    },
  );
});
