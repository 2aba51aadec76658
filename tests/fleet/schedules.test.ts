import { BadRequest, createClient, NotFound } from '@cairn/client';
import { describe, it, type TestContext } from 'vitest';
import { FINAL_STATUSES } from '@cairn/engine';
import { ScheduleQueue } from '@cairn/queue';
import { requiresBackend, testRedisUrl } from '@cairn/services';
import {
  FLEET_BACKEND,
  holderOf,
  QUEUE_BACKENDS,
  RESEARCHER,
  startFleet,
  waitFor,
} from './fleet.js';
import { firingsOf, waitForNoFiringJob } from './schedule-firings.js';

/**
 * Each case starts a fleet of its own (two workers and a producer) and waits on firings a second
 * apart: one at a time, so that five fleets do not start at once on a loaded machine.
 */
const CASE_TIMEOUT_MS = 120_000;

/** The schedule's interval: short, so that firings come due while processes are down. */
const EVERY_MS = 1000;

describe('schedules on real processes', () => {
  for (const backend of QUEUE_BACKENDS)
    it(
      `an interval schedule fires runs that record it; a SIGKILLed worker and a SIGKILLed producer lose no firing, and a firing delivered twice starts one run (${backend})`,
      { ...requiresBackend(backend), timeout: CASE_TIMEOUT_MS },
      async ({ expect, onTestFinished }: TestContext) => {
        const fleet = await startFleet({ backend, toolDelayMs: 100 });
        onTestFinished(() => fleet.stop());
        const schedules = await ScheduleQueue.open({
          backend,
          redisUrl: backend === 'redis' ? testRedisUrl() : undefined,
          databaseUrl: fleet.db.url,
          queueName: fleet.client.runQueue.name,
        });
        onTestFinished(() => schedules.close());
        const [, , first] = await Promise.all([
          fleet.spawnWorker('a'),
          fleet.spawnWorker('b'),
          fleet.spawnProducer('p1'),
        ]);

        const created = await createClient({ baseUrl: first.baseUrl }).schedules.create({
          entity: RESEARCHER,
          input: "Research 'cairns'",
          checkpoint: 'tool-batch',
          every_ms: EVERY_MS,
          overlap: 'allow',
        });
        const scheduleId = created.schedule_id;
        expect(created).toMatchObject({ every_ms: EVERY_MS, overlap: 'allow', paused: false });

        // It fires, and each firing's run records it.
        await waitFor(
          async () =>
            (await firingsOf(fleet, scheduleId)).filter((f) => f.run_id !== null).length >= 2,
          30_000,
          'two started firings',
          first.exited,
        );

        // A worker dies holding one of the schedule's runs while firings keep coming.
        let holder: string | undefined;
        await waitFor(
          async () => {
            for (const f of await firingsOf(fleet, scheduleId)) {
              if (f.run_id === null) continue;
              holder = holderOf(await fleet.client.getRun(f.run_id));
              if (holder !== undefined) return true;
            }
            return false;
          },
          30_000,
          "a worker holding a schedule's run",
        );
        const victim = fleet.workers.find((w) => w.id === holder)!;
        victim.kill('SIGKILL');
        await victim.exited;

        // The only producer dies; a firing comes due while none is up, and is delivered twice.
        first.kill('SIGKILL');
        await first.exited;
        const due = (await schedules.next(scheduleId))!;
        expect(due).toBeDefined();
        await waitFor(() => Date.now() > due, 30_000, 'a firing due with no producer up');
        await schedules.addFiring(scheduleId, due);
        const second = await fleet.spawnProducer('p2');
        await waitFor(
          async () => {
            const firings = await firingsOf(fleet, scheduleId);
            const dueOne = firings.find((f) => f.fire_time.getTime() === due);
            return (
              dueOne?.run_id != null &&
              firings.filter((f) => f.fire_time.getTime() > due).length >= 2
            );
          },
          60_000,
          'the due firing started, and two more after it',
          second.exited,
        );

        // Paused: its job scheduler goes, and nothing more fires.
        const cairn = createClient({ baseUrl: second.baseUrl });
        expect((await cairn.schedules.update(scheduleId, { paused: true })).paused).toBe(true);
        expect(await schedules.next(scheduleId)).toBeUndefined();
        await waitForNoFiringJob(schedules);

        const firings = await firingsOf(fleet, scheduleId);
        // Every firing started (overlap allow), each with a run of its own: none doubled.
        expect(firings.every((f) => f.outcome === 'started' && f.run_id !== null)).toBe(true);
        const runIds = firings.map((f) => f.run_id!);
        expect(new Set(runIds).size).toBe(firings.length);
        const { count } = await fleet.store.db
          .selectFrom('runs')
          .select((eb) => eb.fn.countAll<string>().as('count'))
          .executeTakeFirstOrThrow();
        expect(Number(count)).toBe(firings.length);
        // The firing due while no producer was up, delivered twice, started one run.
        expect(firings.filter((f) => f.fire_time.getTime() === due)).toHaveLength(1);

        // Every run ends COMPLETED, the killed worker's on the other one.
        await waitFor(
          async () => {
            const statuses = await Promise.all(
              runIds.map(async (id) => (await fleet.client.getRunStatus(id))!),
            );
            return statuses.every((s) => FINAL_STATUSES.includes(s));
          },
          90_000,
          'every scheduled run finished',
        );
        for (const id of runIds) {
          const view = (await fleet.client.getRun(id))!;
          expect(view.status, id).toBe('COMPLETED');
        }
        const page = await cairn.schedules.get(scheduleId);
        expect(page.next_fire_times).toEqual([]);
        expect(page.recent_firings.map((f) => f.run_status)).toEqual(
          firings.map(() => 'COMPLETED'),
        );
        expect((await cairn.schedules.list()).map((s) => s.schedule_id)).toEqual([scheduleId]);
        const gaps = firings
          .slice(1)
          .map((f, i) => f.fire_time.getTime() - firings[i]!.fire_time.getTime());
        console.log(
          `schedules (${backend}): ${firings.length} firings, ${firings.length} runs, ms between firings ${gaps.join(' ')}; worker ${victim.id} and producer p1 SIGKILLed`,
        );
      },
    );

  it(
    `skip: while the schedule's run is unfinished its firings are recorded skipped, and its runs never overlap (${FLEET_BACKEND})`,
    { timeout: CASE_TIMEOUT_MS },
    async ({ expect, onTestFinished }: TestContext) => {
      // Each run takes several seconds (four tool calls of 1.5 s): most firings find one unfinished.
      const fleet = await startFleet({ backend: FLEET_BACKEND, toolDelayMs: 1500 });
      onTestFinished(() => fleet.stop());
      const [, producer] = await Promise.all([fleet.spawnWorker('a'), fleet.spawnProducer('p')]);
      const cairn = createClient({ baseUrl: producer.baseUrl });
      await expect(
        cairn.schedules.create({ entity: RESEARCHER, input: 'x', cron: '61 * * * *' }),
      ).rejects.toThrow(BadRequest);
      const { schedule_id: scheduleId } = await cairn.schedules.create({
        entity: RESEARCHER,
        input: "Research 'cairns'",
        every_ms: EVERY_MS,
      });
      await waitFor(
        async () =>
          (await firingsOf(fleet, scheduleId)).filter((f) => f.run_id !== null).length >= 2,
        90_000,
        'a second run started',
        producer.exited,
      );
      await cairn.schedules.delete(scheduleId);
      await expect(cairn.schedules.get(scheduleId)).rejects.toThrow(NotFound);
      const firings = await firingsOf(fleet, scheduleId);
      const started = firings.filter((f) => f.outcome === 'started');
      expect(firings.filter((f) => f.outcome === 'skipped').length).toBeGreaterThan(0);
      // The second run was created only once the first had ended.
      const [one, two] = await Promise.all(
        started.slice(0, 2).map(async (f) => (await fleet.client.getRun(f.run_id!))!),
      );
      const firstEnded = Math.max(...one!.attempts.map((a) => Date.parse(a.ended_at ?? '')));
      expect(one!.status).toBe('COMPLETED');
      expect(Date.parse(two!.created_at)).toBeGreaterThanOrEqual(firstEnded);
      const skippedNotes = await fleet.store.db
        .selectFrom('schedule_firings')
        .select('note')
        .where('schedule_id', '=', scheduleId)
        .where('outcome', '=', 'skipped')
        .execute();
      expect(skippedNotes[0]?.note).toMatch(
        /^previous run (\S+ is (PENDING|RUNNING)|is being created)$/,
      );
    },
  );

  for (const backend of QUEUE_BACKENDS)
    it(
      `buffer_one: one firing waits for the unfinished run and starts once it ends, the others are skipped (${backend})`,
      { ...requiresBackend(backend), timeout: CASE_TIMEOUT_MS },
      async ({ expect, onTestFinished }: TestContext) => {
        const fleet = await startFleet({ backend, toolDelayMs: 1500 });
        onTestFinished(() => fleet.stop());
        const [, producer] = await Promise.all([fleet.spawnWorker('a'), fleet.spawnProducer('p')]);
        const cairn = createClient({ baseUrl: producer.baseUrl });
        const { schedule_id: scheduleId } = await cairn.schedules.create({
          entity: RESEARCHER,
          input: "Research 'cairns'",
          every_ms: EVERY_MS,
          overlap: 'buffer_one',
        });
        await waitFor(
          async () =>
            (await firingsOf(fleet, scheduleId)).filter((f) => f.run_id !== null).length >= 2,
          90_000,
          'the buffered firing started',
          producer.exited,
        );
        await cairn.schedules.delete(scheduleId);
        const firings = await firingsOf(fleet, scheduleId);
        const [first, buffered] = firings.filter((f) => f.run_id !== null);
        // The buffered firing is the one right after the first: the ones between waited behind it, skipped.
        expect(buffered!.fire_time.getTime()).toBe(first!.fire_time.getTime() + EVERY_MS);
        const skipped = firings.filter(
          (f) => f.outcome === 'skipped' && f.fire_time > buffered!.fire_time,
        );
        // How many later firings are recorded (skipped) before this check depends on the machine's load: logged below.
        const [one, two] = await Promise.all(
          [first!, buffered!].map(async (f) => (await fleet.client.getRun(f.run_id!))!),
        );
        const firstEnded = Math.max(...one!.attempts.map((a) => Date.parse(a.ended_at ?? '')));
        expect(one!.status).toBe('COMPLETED');
        expect(Date.parse(two!.created_at)).toBeGreaterThanOrEqual(firstEnded);
        console.log(
          `buffer_one (${backend}): run 2 created ${Date.parse(two!.created_at) - firstEnded} ms after run 1 ended; ${skipped.length} firings skipped meanwhile`,
        );
      },
    );
});
