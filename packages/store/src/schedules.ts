import type { RunStatus } from '@cairn/engine';
import type { EntityRef } from '@cairn/engine/store';
import type { ScheduleOverlap } from '@cairn/engine/lifecycle';
import { sql, type Kysely, type Selectable, type Transaction } from 'kysely';
import type { Database, FiringOutcome, SchedulesTable } from './schema.js';
import { recordWebhookEvent } from './webhooks/record-webhook-event.js';

/** When a schedule fires: a cron pattern in an IANA time zone, or an interval. */
export type ScheduleTiming = { cron: string; timezone: string } | { everyMs: number };

/** A schedule as stored. */
export interface ScheduleRecord {
  scheduleId: string;
  tenantId: string | null;
  entity: EntityRef;
  input: string;
  /** The run create fields besides entity and input, as the API names them (`session_id`, `budget`, ...). */
  runFields: Record<string, unknown>;
  timing: ScheduleTiming;
  overlap: ScheduleOverlap;
  paused: boolean;
  createdAt: Date;
  updatedAt: Date;
}

/** What {@link ScheduleStore.create} stores (`createdAt` and `updatedAt` are the database's). */
export type NewSchedule = Omit<ScheduleRecord, 'createdAt' | 'updatedAt'>;

/** What {@link ScheduleStore.update} may change. */
export type SchedulePatch = Partial<
  Pick<ScheduleRecord, 'entity' | 'input' | 'runFields' | 'timing' | 'overlap' | 'paused'>
>;

/** One firing of a schedule, keyed by its time. */
export interface FiringRecord {
  scheduleId: string;
  fireTime: Date;
  tenantId: string | null;
  outcome: FiringOutcome;
  /** The run it started; null while it starts, when skipped or buffered, or once the run is deleted. */
  runId: string | null;
  note: string | null;
  recordedAt: Date;
}

/** A firing with the status of the run it started, for the schedule's page. */
export interface FiringView extends FiringRecord {
  runStatus: RunStatus | null;
}

/**
 * What the overlap rule reads when a firing comes: the run the schedule started last before it
 * (`status` null while that firing's run is being created; `previous` undefined when there is
 * none, or its run was deleted by retention or a session delete), and whether another firing of
 * the schedule is buffered.
 */
export interface FiringSituationRead {
  previous: { runId: string | null; status: RunStatus | null } | undefined;
  otherBuffered: boolean;
}

/** Whose schedules a read sees: a tenant's own, or every one (`null`: an admin key). */
export interface ScheduleScope {
  tenantId: string | null;
}

/**
 * Schedules and their firings (`0025_schedules`): the API's reads and writes, and what a firing
 * records. A firing's row is keyed by `(schedule_id, fire_time)`, so a second delivery of one
 * firing finds the first one's row; a unique index keeps at most one `buffered` row per schedule.
 * No statement here is on a run's hot path.
 */
export class ScheduleStore {
  constructor(private readonly db: Kysely<Database>) {}

  /** Stores a new schedule and returns it. */
  async create(schedule: NewSchedule): Promise<ScheduleRecord> {
    const row = await this.db
      .insertInto('schedules')
      .values({
        schedule_id: schedule.scheduleId,
        tenant_id: schedule.tenantId,
        entity_kind: schedule.entity.kind,
        entity_name: schedule.entity.name,
        input: schedule.input,
        run_fields: JSON.stringify(schedule.runFields),
        ...timingColumns(schedule.timing),
        overlap: schedule.overlap,
        paused: schedule.paused,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return scheduleOf(row);
  }

  /** The schedule, if `scope` may see it. */
  async get(scheduleId: string, scope: ScheduleScope): Promise<ScheduleRecord | undefined> {
    const row = await this.db
      .selectFrom('schedules')
      .selectAll()
      .where('schedule_id', '=', scheduleId)
      .$if(scope.tenantId !== null, (qb) => qb.where('tenant_id', '=', scope.tenantId))
      .executeTakeFirst();
    return row && scheduleOf(row);
  }

  /** The schedules `scope` may see, newest first. */
  async list(scope: ScheduleScope, page: { limit: number }): Promise<ScheduleRecord[]> {
    const rows = await this.db
      .selectFrom('schedules')
      .selectAll()
      .$if(scope.tenantId !== null, (qb) => qb.where('tenant_id', '=', scope.tenantId))
      .orderBy('created_at', 'desc')
      .orderBy('schedule_id', 'desc')
      .limit(page.limit)
      .execute();
    return rows.map(scheduleOf);
  }

  /** Every schedule that is not paused, of every tenant: what the queue's job schedulers should hold. */
  async listActive(): Promise<ScheduleRecord[]> {
    const rows = await this.db
      .selectFrom('schedules')
      .selectAll()
      .where('paused', '=', false)
      .execute();
    return rows.map(scheduleOf);
  }

  /** Applies `patch` to a schedule `scope` may see; undefined when there is none. */
  async update(
    scheduleId: string,
    scope: ScheduleScope,
    patch: SchedulePatch,
  ): Promise<ScheduleRecord | undefined> {
    const row = await this.db
      .updateTable('schedules')
      .set({
        ...(patch.entity && { entity_kind: patch.entity.kind, entity_name: patch.entity.name }),
        ...(patch.input !== undefined && { input: patch.input }),
        ...(patch.runFields && { run_fields: JSON.stringify(patch.runFields) }),
        ...(patch.timing && timingColumns(patch.timing)),
        ...(patch.overlap && { overlap: patch.overlap }),
        ...(patch.paused !== undefined && { paused: patch.paused }),
        updated_at: sql<Date>`now()`,
      })
      .where('schedule_id', '=', scheduleId)
      .$if(scope.tenantId !== null, (qb) => qb.where('tenant_id', '=', scope.tenantId))
      .returningAll()
      .executeTakeFirst();
    return row && scheduleOf(row);
  }

  /** Deletes a schedule `scope` may see; its firings (and the runs they started) stay. */
  async delete(scheduleId: string, scope: ScheduleScope): Promise<boolean> {
    const result = await this.db
      .deleteFrom('schedules')
      .where('schedule_id', '=', scheduleId)
      .$if(scope.tenantId !== null, (qb) => qb.where('tenant_id', '=', scope.tenantId))
      .executeTakeFirst();
    return result.numDeletedRows > 0n;
  }

  /** The firing of `scheduleId` at `fireTime`, if one was recorded. */
  firing(scheduleId: string, fireTime: Date): Promise<FiringRecord | undefined> {
    return firingIn(this.db, scheduleId, fireTime);
  }

  /**
   * Records a firing with the outcome `decide` gives it, and returns the row that stands: this one,
   * or the one an earlier delivery recorded (then `decide` is not called). Firings of one schedule
   * decide one at a time (the schedule's row is locked), each reading what the ones before it
   * recorded: two firings handled at once cannot both see no unfinished run. A skipped firing's
   * `schedule.run_skipped` webhook event is recorded in the same transaction.
   */
  async recordFiring(
    firing: { scheduleId: string; fireTime: Date; tenantId: string | null; entity: EntityRef },
    decide: (situation: FiringSituationRead) => { outcome: FiringOutcome; note?: string },
  ): Promise<FiringRecord> {
    return this.db.transaction().execute(async (trx) => {
      await trx
        .selectFrom('schedules')
        .select('schedule_id')
        .where('schedule_id', '=', firing.scheduleId)
        .forUpdate()
        .execute();
      const existing = await firingIn(trx, firing.scheduleId, firing.fireTime);
      if (existing) return existing;
      const { outcome, note } = decide({
        previous: await previousRunIn(trx, firing.scheduleId, firing.fireTime),
        otherBuffered: await hasOtherBufferedIn(trx, firing.scheduleId, firing.fireTime),
      });
      const row = await trx
        .insertInto('schedule_firings')
        .values({
          schedule_id: firing.scheduleId,
          fire_time: firing.fireTime,
          tenant_id: firing.tenantId,
          outcome,
          note: note ?? null,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      if (row.outcome === 'skipped') await recordSkip(trx, firing.entity, firingOf(row));
      return firingOf(row);
    });
  }

  /** Names the run a started firing made (the first run named stays). */
  async setFiringRun(scheduleId: string, fireTime: Date, runId: string): Promise<void> {
    await this.db
      .updateTable('schedule_firings')
      .set({ run_id: runId })
      .where('schedule_id', '=', scheduleId)
      .where('fire_time', '=', fireTime)
      .where('outcome', '=', 'started')
      .where('run_id', 'is', null)
      .execute();
  }

  /**
   * Moves a firing from one outcome to another (a buffered one starting, a start the API refused
   * becoming skipped); false when another delivery moved it first.
   */
  async moveFiring(
    scheduleId: string,
    fireTime: Date,
    move: { from: FiringOutcome; to: FiringOutcome; note?: string; entity?: EntityRef },
  ): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const row = await trx
        .updateTable('schedule_firings')
        .set({ outcome: move.to, ...(move.note !== undefined && { note: move.note }) })
        .where('schedule_id', '=', scheduleId)
        .where('fire_time', '=', fireTime)
        .where('outcome', '=', move.from)
        .returningAll()
        .executeTakeFirst();
      if (row?.outcome === 'skipped' && move.entity)
        await recordSkip(trx, move.entity, firingOf(row));
      return row !== undefined;
    });
  }

  /** What the overlap rule reads of the firing of `scheduleId` at `fireTime` (see {@link FiringSituationRead}). */
  async situation(scheduleId: string, fireTime: Date): Promise<FiringSituationRead> {
    return {
      previous: await previousRunIn(this.db, scheduleId, fireTime),
      otherBuffered: await hasOtherBufferedIn(this.db, scheduleId, fireTime),
    };
  }

  /** The schedule's latest firings, newest first, with the status of each run started. */
  async recentFirings(scheduleId: string, limit: number): Promise<FiringView[]> {
    const rows = await this.db
      .selectFrom('schedule_firings as f')
      .leftJoin('runs as r', 'r.run_id', 'f.run_id')
      .selectAll('f')
      .select('r.status as run_status')
      .where('f.schedule_id', '=', scheduleId)
      .orderBy('f.fire_time', 'desc')
      .limit(limit)
      .execute();
    return rows.map((row) => ({ ...firingOf(row), runStatus: row.run_status }));
  }

  /** The firing that started `runId`, if a schedule started it. */
  async firingOfRun(runId: string): Promise<FiringRecord | undefined> {
    const row = await this.db
      .selectFrom('schedule_firings')
      .selectAll()
      .where('run_id', '=', runId)
      .executeTakeFirst();
    return row && firingOf(row);
  }
}

type Db = Kysely<Database> | Transaction<Database>;

async function firingIn(
  db: Db,
  scheduleId: string,
  fireTime: Date,
): Promise<FiringRecord | undefined> {
  const row = await db
    .selectFrom('schedule_firings')
    .selectAll()
    .where('schedule_id', '=', scheduleId)
    .where('fire_time', '=', fireTime)
    .executeTakeFirst();
  return row && firingOf(row);
}

async function previousRunIn(
  db: Db,
  scheduleId: string,
  before: Date,
): Promise<FiringSituationRead['previous']> {
  const row = await db
    .selectFrom('schedule_firings as f')
    .leftJoin('runs as r', 'r.run_id', 'f.run_id')
    .select(['f.run_id', 'r.status'])
    .where('f.schedule_id', '=', scheduleId)
    .where('f.fire_time', '<', before)
    .where('f.outcome', '=', 'started')
    .orderBy('f.fire_time', 'desc')
    .limit(1)
    .executeTakeFirst();
  if (!row) return undefined;
  // Started, its run not named yet: being created (the overlap rule counts it unfinished).
  if (row.run_id === null) return { runId: null, status: null };
  return row.status === null ? undefined : { runId: row.run_id, status: row.status };
}

async function hasOtherBufferedIn(db: Db, scheduleId: string, except: Date): Promise<boolean> {
  const row = await db
    .selectFrom('schedule_firings')
    .select('fire_time')
    .where('schedule_id', '=', scheduleId)
    .where('outcome', '=', 'buffered')
    .where('fire_time', '<>', except)
    .executeTakeFirst();
  return row !== undefined;
}

function timingColumns(timing: ScheduleTiming): {
  cron: string | null;
  timezone: string | null;
  every_ms: number | null;
} {
  return 'cron' in timing
    ? { cron: timing.cron, timezone: timing.timezone, every_ms: null }
    : { cron: null, timezone: null, every_ms: timing.everyMs };
}

function scheduleOf(row: Selectable<SchedulesTable>): ScheduleRecord {
  return {
    scheduleId: row.schedule_id,
    tenantId: row.tenant_id,
    entity: { kind: row.entity_kind, name: row.entity_name },
    input: row.input,
    runFields: row.run_fields,
    timing:
      row.cron !== null && row.timezone !== null
        ? { cron: row.cron, timezone: row.timezone }
        : { everyMs: Number(row.every_ms) },
    overlap: row.overlap,
    paused: row.paused,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function firingOf(row: Selectable<Database['schedule_firings']>): FiringRecord {
  return {
    scheduleId: row.schedule_id,
    fireTime: row.fire_time,
    tenantId: row.tenant_id,
    outcome: row.outcome,
    runId: row.run_id,
    note: row.note,
    recordedAt: row.recorded_at,
  };
}

/** The `schedule.run_skipped` webhook event of a skipped firing (recorded only when an endpoint of its tenant takes it). */
async function recordSkip(
  trx: Transaction<Database>,
  entity: EntityRef,
  firing: FiringRecord,
): Promise<void> {
  await recordWebhookEvent(trx, {
    tenantId: firing.tenantId,
    type: 'schedule.run_skipped',
    entityName: entity.name,
    payload: {
      schedule_id: firing.scheduleId,
      fire_time: firing.fireTime.toISOString(),
      entity,
      reason: firing.note,
    },
  });
}
