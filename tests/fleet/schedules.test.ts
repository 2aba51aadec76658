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
  type Fleet,
} from './fleet.js';

/** The schedule's interval: short, so that firings come due while processes are down. */
const EVERY_MS = 1000;

interface FiringRow {
  fire_time: Date;
  outcome: string;
  run_id: string | null;
}

function firingsOf(fleet: Fleet, scheduleId: string): Promise<FiringRow[]> {
  return fleet.store.db
    .selectFrom('schedule_firings')
    .select(['fire_time', 'outcome', 'run_id'])
    .where('schedule_id', '=', scheduleId)
    .orderBy('fire_time')
    .execute();
}

async function json(res: Response): Promise<Record<string, unknown>> {
  return (await res.json()) as Record<string, unknown>;
}

describe('schedules on real processes', () => {
  for (const backend of QUEUE_BACKENDS)
    it.concurrent(
      `an interval schedule fires runs that record it; a SIGKILLed worker and a SIGKILLed producer lose no firing, and a firing delivered twice starts one run (${backend})`,
      requiresBackend(backend),
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

        const created = await fetch(`${first.baseUrl}/v1/schedules`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({
            entity: RESEARCHER,
            input: "Research 'cairns'",
            checkpoint: 'tool-batch',
            every_ms: EVERY_MS,
            overlap: 'allow',
          }),
        });
        expect(created.status).toBe(201);
        const scheduleId = (await json(created)).schedule_id as string;

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
        const paused = await fetch(`${second.baseUrl}/v1/schedules/${scheduleId}`, {
          method: 'PATCH',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ paused: true }),
        });
        expect(paused.status).toBe(200);
        expect(await schedules.next(scheduleId)).toBeUndefined();
        await waitFor(
          async () => {
            const counts = await schedules.queue.getJobCounts('active', 'waiting', 'delayed');
            return counts.active + counts.waiting + counts.delayed === 0;
          },
          30_000,
          'no firing job left',
        );

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
        const page = await json(await fetch(`${second.baseUrl}/v1/schedules/${scheduleId}`));
        expect(page.next_fire_times).toEqual([]);
        expect((page.recent_firings as { run_status: string }[])[0]?.run_status).toBe('COMPLETED');
        const gaps = firings
          .slice(1)
          .map((f, i) => f.fire_time.getTime() - firings[i]!.fire_time.getTime());
        console.log(
          `schedules (${backend}): ${firings.length} firings, ${firings.length} runs, ms between firings ${gaps.join(' ')}; worker ${victim.id} and producer p1 SIGKILLed`,
        );
      },
    );

  it.concurrent(
    `skip: while the schedule's run is unfinished its firings are recorded skipped, and its runs never overlap (${FLEET_BACKEND})`,
    async ({ expect, onTestFinished }: TestContext) => {
      // Each run takes several seconds (four tool calls of 1.5 s): most firings find one unfinished.
      const fleet = await startFleet({ backend: FLEET_BACKEND, toolDelayMs: 1500 });
      onTestFinished(() => fleet.stop());
      const [, producer] = await Promise.all([fleet.spawnWorker('a'), fleet.spawnProducer('p')]);
      const created = await fetch(`${producer.baseUrl}/v1/schedules`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({
          entity: RESEARCHER,
          input: "Research 'cairns'",
          every_ms: EVERY_MS,
        }),
      });
      expect(created.status).toBe(201);
      const scheduleId = (await json(created)).schedule_id as string;
      await waitFor(
        async () =>
          (await firingsOf(fleet, scheduleId)).filter((f) => f.run_id !== null).length >= 2,
        90_000,
        'a second run started',
        producer.exited,
      );
      await fetch(`${producer.baseUrl}/v1/schedules/${scheduleId}`, { method: 'DELETE' });
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
      expect(skippedNotes[0]?.note).toMatch(/^previous run \S+ is (PENDING|RUNNING)$/);
    },
  );
});
