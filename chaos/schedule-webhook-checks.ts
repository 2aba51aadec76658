import type pg from 'pg';
import type { ReceivedWebhook } from '../tests/webhooks/webhook-receiver.js';
import { TOP_LEVEL_RUNS } from './chaos-db.js';

/** The goals of the schedules-and-webhooks scenario: each must be 0. */
export interface ScheduleWebhookGoals {
  /** Firing times between a schedule's first and last firing with no firing recorded (started or skipped), and started firings whose run does not exist. */
  firingsLost: number;
  /** Runs of a schedule beyond one per firing (a run no firing names). */
  firingsDoubled: number;
  /** Outbox events recorded during the scenario that the receiver never accepted. */
  notificationsLost: number;
  /** Pairs of a run's consecutive events where the later one reached the receiver before the earlier one was accepted. */
  outOfOrder: number;
  /** Requests whose signature did not verify with the endpoint's secret. */
  badSignatures: number;
}

/** A schedule of the scenario. */
export interface CheckedSchedule {
  id: string;
  name: string;
  everyMs: number;
}

/** The outbox events (first deliveries) recorded after `afterEventId`, as message ids, that are not in `accepted`. */
export async function undeliveredMessages(
  db: pg.Pool,
  afterEventId: string,
  accepted: ReadonlySet<string>,
): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `select 'msg_' || event_id as id from webhook_events
      where event_id > $1 and endpoint_id is null order by event_id`,
    [afterEventId],
  );
  return rows.map((r) => r.id).filter((id) => !accepted.has(id));
}

/** Counts each goal from Postgres and what the receiver got; `info` is what the report shows beside them. */
export async function checkScheduleWebhookGoals(
  db: pg.Pool,
  input: {
    scenario: string;
    schedules: readonly CheckedSchedule[];
    afterEventId: string;
    received: readonly ReceivedWebhook[];
  },
): Promise<{
  goals: ScheduleWebhookGoals;
  info: {
    firings: Record<string, Record<string, number>>;
    runs: Record<string, number>;
    events: Record<string, number>;
  };
}> {
  const { rows: firings } = await db.query<{
    schedule_id: string;
    fire_ms: string;
    outcome: string;
    run_id: string | null;
    run_exists: boolean;
  }>(
    `select f.schedule_id, (extract(epoch from f.fire_time) * 1000)::bigint::text as fire_ms, f.outcome, f.run_id,
            exists (select 1 from runs r where r.run_id = f.run_id) as run_exists
       from schedule_firings f where f.schedule_id = any($1) order by f.schedule_id, f.fire_time`,
    [input.schedules.map((s) => s.id)],
  );
  const { rows: runs } = await db.query<{ schedule: string; run_id: string; status: string }>(
    `select metadata->>'chaos_schedule' as schedule, run_id, status from runs where run_id in (${TOP_LEVEL_RUNS})`,
    [input.scenario],
  );
  let firingsLost = 0;
  let firingsDoubled = 0;
  const firingCounts: Record<string, Record<string, number>> = {};
  for (const schedule of input.schedules) {
    const own = firings.filter((f) => f.schedule_id === schedule.id);
    const counts: Record<string, number> = {};
    for (const f of own) counts[f.outcome] = (counts[f.outcome] ?? 0) + 1;
    firingCounts[schedule.name] = counts;
    for (let i = 1; i < own.length; i++) {
      const gap = Number(own[i]!.fire_ms) - Number(own[i - 1]!.fire_ms);
      firingsLost += Math.max(0, Math.round(gap / schedule.everyMs) - 1);
    }
    firingsLost += own.filter((f) => f.outcome === 'started' && !f.run_exists).length;
    const named = new Set(own.map((f) => f.run_id).filter((id) => id !== null));
    firingsDoubled += runs.filter(
      (r) => r.schedule === schedule.name && !named.has(r.run_id),
    ).length;
  }

  const { rows: events } = await db.query<{ id: string; type: string; run_id: string | null }>(
    `select 'msg_' || event_id as id, type, run_id from webhook_events
      where event_id > $1 and endpoint_id is null order by event_id`,
    [input.afterEventId],
  );
  const accepted = input.received.filter((r) => r.status < 300 && r.verified);
  const firstAccepted = new Map<string, number>();
  for (const r of accepted) if (!firstAccepted.has(r.id)) firstAccepted.set(r.id, r.at);
  const firstSeen = new Map<string, number>();
  for (const r of input.received) if (!firstSeen.has(r.id)) firstSeen.set(r.id, r.at);
  let outOfOrder = 0;
  const byRun = new Map<string, string[]>();
  for (const e of events)
    if (e.run_id !== null) byRun.set(e.run_id, [...(byRun.get(e.run_id) ?? []), e.id]);
  for (const ids of byRun.values())
    for (let i = 1; i < ids.length; i++) {
      const earlierAccepted = firstAccepted.get(ids[i - 1]!);
      const laterSeen = firstSeen.get(ids[i]!);
      if (earlierAccepted !== undefined && laterSeen !== undefined && laterSeen < earlierAccepted)
        outOfOrder += 1;
    }
  const eventCounts: Record<string, number> = {};
  for (const e of events) eventCounts[e.type] = (eventCounts[e.type] ?? 0) + 1;
  const runCounts: Record<string, number> = {};
  for (const r of runs) runCounts[r.status] = (runCounts[r.status] ?? 0) + 1;
  return {
    goals: {
      firingsLost,
      firingsDoubled,
      notificationsLost: (
        await undeliveredMessages(db, input.afterEventId, new Set(firstAccepted.keys()))
      ).length,
      outOfOrder,
      badSignatures: input.received.filter((r) => r.verified === undefined).length,
    },
    info: { firings: firingCounts, runs: runCounts, events: eventCounts },
  };
}
