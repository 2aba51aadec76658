import type { ScheduleQueue } from '@cairn/queue';
import { waitFor, type Fleet } from './fleet.js';

/** One firing of a schedule as its table records it. */
export interface FiringRow {
  fire_time: Date;
  outcome: string;
  run_id: string | null;
  /** When a producer recorded it (Postgres's clock, on this machine): when its job was taken. */
  recorded_at: Date;
}

/** The schedule's firings, earliest first (read straight from the fleet's database). */
export function firingsOf(fleet: Fleet, scheduleId: string): Promise<FiringRow[]> {
  return fleet.store.db
    .selectFrom('schedule_firings')
    .select(['fire_time', 'outcome', 'run_id', 'recorded_at'])
    .where('schedule_id', '=', scheduleId)
    .orderBy('fire_time')
    .execute();
}

/** Waits until the schedule queue holds no firing job (active, waiting or delayed): a paused schedule has stopped firing. */
export function waitForNoFiringJob(schedules: ScheduleQueue): Promise<void> {
  return waitFor(
    async () => {
      const counts = await schedules.queue.getJobCounts('active', 'waiting', 'delayed');
      return (counts.active ?? 0) + (counts.waiting ?? 0) + (counts.delayed ?? 0) === 0;
    },
    30_000,
    'no firing job left',
  );
}
