import type { Fleet } from './fleet.js';

/** One firing of a schedule as its table records it. */
export interface FiringRow {
  fire_time: Date;
  outcome: string;
  run_id: string | null;
}

/** The schedule's firings, earliest first (read straight from the fleet's database). */
export function firingsOf(fleet: Fleet, scheduleId: string): Promise<FiringRow[]> {
  return fleet.store.db
    .selectFrom('schedule_firings')
    .select(['fire_time', 'outcome', 'run_id'])
    .where('schedule_id', '=', scheduleId)
    .orderBy('fire_time')
    .execute();
}
