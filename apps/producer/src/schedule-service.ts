import { randomUUID } from 'node:crypto';
import {
  EntityNotFoundError,
  IdempotencyKeyReusedError,
  TenantBudgetExhaustedError,
  UserError,
  type CreatedRun,
  type CreateRunRequest,
} from '@cairn/engine';
import type { EntityCatalog, EntityRef } from '@cairn/engine/store';
import { firingMove, type FiringMove } from '@cairn/engine/lifecycle';
import { nextFireTimes, type ScheduleQueue } from '@cairn/queue';
import type {
  FiringRecord,
  FiringSituationRead,
  FiringView,
  ScheduleRecord,
  ScheduleScope,
  ScheduleStore,
  ScheduleTiming,
} from '@cairn/store';
import { createRunRequestOf } from './create-run-request.js';
import { InvalidBodyError, NotFoundError } from './errors.js';
import {
  DEFAULT_SCHEDULE_TIMEZONE,
  RUN_FIELD_NAMES,
  type CreateScheduleBody,
  type UpdateScheduleBody,
} from './schedule-schemas.js';

/** What became of one delivery of a firing. */
export type FiringResult =
  | { outcome: 'started'; runId: string }
  | { outcome: 'skipped'; note: string | null }
  | { outcome: 'waiting' }
  | { outcome: 'ignored'; why: 'schedule deleted' | 'schedule paused' };

/** A schedule with what its page shows: its next firings and its latest ones. */
export interface ScheduleDetail {
  schedule: ScheduleRecord;
  /** The next firing times (ms since the epoch); empty while paused. */
  nextFireTimes: number[];
  recentFirings: FiringView[];
}

/** What {@link ScheduleService} is wired with. */
export interface ScheduleServiceDeps {
  store: ScheduleStore;
  queue: ScheduleQueue;
  /** Where entity names are checked (the producer's: the entities live workers serve). */
  catalog: EntityCatalog;
  /** Creates and enqueues a run (`ProducerService.enqueueRun`): idempotent by its `idempotencyKey`. */
  startRun(request: CreateRunRequest): Promise<CreatedRun>;
}

/** How many next firing times a schedule's page lists. */
const NEXT_FIRINGS_SHOWN = 5;

/**
 * Schedules: the API's create, read, update and delete, kept in step with one BullMQ job scheduler
 * per active schedule, and the handling of each firing that scheduler's jobs deliver. A firing's
 * time is its key: its row in `schedule_firings` decides once what it does (start, skip, buffer,
 * by the lifecycle's overlap rule), and its run is created under the idempotency key
 * `schedule:<id>:<time>`, so a second delivery finds the same run.
 */
export class ScheduleService {
  constructor(private readonly deps: ScheduleServiceDeps) {}

  /** Creates a schedule (its scheduler too, unless paused); 400 naming `entity` for one no worker serves. Nothing is stored when the scheduler cannot be made. */
  async create(scope: ScheduleScope, body: CreateScheduleBody): Promise<ScheduleRecord> {
    await this.assertServed(body.entity);
    const schedule = await this.deps.store.create({
      scheduleId: `sch_${randomUUID()}`,
      tenantId: scope.tenantId,
      entity: body.entity,
      input: body.input,
      runFields: runFieldsOf(body),
      timing: timingOf(body)!,
      overlap: body.overlap ?? 'skip',
      paused: body.paused ?? false,
    });
    try {
      await this.syncScheduler(schedule);
    } catch (error) {
      await this.deps.store.delete(schedule.scheduleId, scope);
      throw error;
    }
    return schedule;
  }

  /** The schedules `scope` sees, newest first. */
  list(scope: ScheduleScope, limit: number): Promise<ScheduleRecord[]> {
    return this.deps.store.list(scope, { limit });
  }

  /** A schedule with its next and latest firings; `NotFoundError` (404) when `scope` sees none. */
  async get(scope: ScheduleScope, scheduleId: string, firings = 20): Promise<ScheduleDetail> {
    const schedule = await this.deps.store.get(scheduleId, scope);
    if (!schedule) throw scheduleNotFound(scheduleId);
    const next = schedule.paused ? undefined : await this.deps.queue.next(scheduleId);
    return {
      schedule,
      nextFireTimes:
        next === undefined
          ? []
          : [
              next,
              ...nextFireTimes(schedule.timing, {
                after: next,
                count: NEXT_FIRINGS_SHOWN - 1,
              }),
            ],
      recentFirings: await this.deps.store.recentFirings(scheduleId, firings),
    };
  }

  /** The firing that started run `runId` (its schedule and firing time), if a schedule started it: the run's page names it. */
  firingOfRun(runId: string): Promise<FiringRecord | undefined> {
    return this.deps.store.firingOfRun(runId);
  }

  /** Changes a schedule and upserts (or, paused, removes) its scheduler. */
  async update(
    scope: ScheduleScope,
    scheduleId: string,
    body: UpdateScheduleBody,
  ): Promise<ScheduleRecord> {
    if (body.entity) await this.assertServed(body.entity);
    const current = await this.deps.store.get(scheduleId, scope);
    if (!current) throw scheduleNotFound(scheduleId);
    const fields = runFieldsOf(body);
    const updated = await this.deps.store.update(scheduleId, scope, {
      ...(body.entity && { entity: body.entity }),
      ...(body.input !== undefined && { input: body.input }),
      ...(Object.keys(fields).length > 0 && { runFields: { ...current.runFields, ...fields } }),
      ...(timingOf(body) && { timing: timingOf(body) }),
      ...(body.overlap && { overlap: body.overlap }),
      ...(body.paused !== undefined && { paused: body.paused }),
    });
    if (!updated) throw scheduleNotFound(scheduleId);
    await this.syncScheduler(updated);
    return updated;
  }

  /** Deletes a schedule and its scheduler; the runs it started stay. */
  async delete(scope: ScheduleScope, scheduleId: string): Promise<void> {
    if (!(await this.deps.store.delete(scheduleId, scope))) throw scheduleNotFound(scheduleId);
    await this.deps.queue.remove(scheduleId);
  }

  /**
   * Gives every active schedule whose scheduler is missing (a Redis lost with its data, a crash
   * between a write and its upsert) its scheduler again; returns how many it made. Only missing
   * ones are upserted: concurrent upserts of one scheduler from several producers at start is what
   * BullMQ issues #3085 and #3381 report losing schedulers to.
   */
  async restoreSchedulers(): Promise<number> {
    let restored = 0;
    for (const schedule of await this.deps.store.listActive()) {
      if ((await this.deps.queue.next(schedule.scheduleId)) !== undefined) continue;
      await this.deps.queue.upsert(schedule.scheduleId, schedule.timing);
      restored += 1;
    }
    return restored;
  }

  /**
   * Handles one delivery of the firing of `scheduleId` at `fireTime`: the first delivery records
   * what the overlap rule decides, every later one follows that record. `waiting`: the firing is
   * buffered behind an unfinished run; deliver it again later.
   */
  async fire(scheduleId: string, fireTime: Date): Promise<FiringResult> {
    const { store } = this.deps;
    const schedule = await store.get(scheduleId, { tenantId: null });
    if (!schedule) return { outcome: 'ignored', why: 'schedule deleted' };
    let firing = await store.firing(scheduleId, fireTime);
    if (schedule.paused && firing === undefined)
      return { outcome: 'ignored', why: 'schedule paused' };
    firing ??= await store.recordFiring(
      { scheduleId, fireTime, tenantId: schedule.tenantId, entity: schedule.entity },
      (situation) => {
        const { move, note } = judge(schedule, situation);
        return { outcome: outcomeOf(move), ...(note !== undefined && { note }) };
      },
    );
    if (firing.outcome === 'buffered') {
      const { move } = judge(schedule, await store.situation(scheduleId, fireTime));
      if (move !== 'start') return { outcome: 'waiting' };
      await store.moveFiring(scheduleId, fireTime, { from: 'buffered', to: 'started' });
      firing = (await store.firing(scheduleId, fireTime))!;
    }
    if (firing.outcome === 'skipped') return { outcome: 'skipped', note: firing.note };
    if (firing.outcome === 'buffered') return { outcome: 'waiting' };
    return this.start(schedule, firing);
  }

  /**
   * Creates (or finds again) the firing's run and names it on the firing. A run the API would refuse
   * (its entity no longer served, a bad field, the tenant's day budget spent) makes the firing
   * skipped, with the error as its note: delivering it again would be refused again.
   */
  private async start(schedule: ScheduleRecord, firing: FiringRecord): Promise<FiringResult> {
    if (firing.runId !== null) return { outcome: 'started', runId: firing.runId };
    let runId: string;
    try {
      runId = (await this.deps.startRun(runRequestOf(schedule, firing.fireTime))).runId;
    } catch (error) {
      // The schedule changed between two deliveries of this firing: the first one's run stands.
      if (error instanceof IdempotencyKeyReusedError) runId = error.runId;
      else if (
        error instanceof UserError ||
        error instanceof EntityNotFoundError ||
        error instanceof TenantBudgetExhaustedError
      ) {
        const note = `the run was refused: ${error.message}`;
        await this.deps.store.moveFiring(schedule.scheduleId, firing.fireTime, {
          from: 'started',
          to: 'skipped',
          note,
          entity: schedule.entity,
        });
        return { outcome: 'skipped', note };
      } else throw error;
    }
    await this.deps.store.setFiringRun(schedule.scheduleId, firing.fireTime, runId);
    return { outcome: 'started', runId };
  }

  /** An upsert for an active schedule, a removal for a paused one. */
  private async syncScheduler(schedule: ScheduleRecord): Promise<void> {
    if (schedule.paused) await this.deps.queue.remove(schedule.scheduleId);
    else await this.deps.queue.upsert(schedule.scheduleId, schedule.timing);
  }

  private async assertServed(entity: EntityRef): Promise<void> {
    try {
      if (await this.deps.catalog.describe(entity)) return;
      throw new EntityNotFoundError(entity.kind, entity.name);
    } catch (error) {
      if (error instanceof EntityNotFoundError) throw new InvalidBodyError('entity', error.message);
      throw error;
    }
  }
}

/** The idempotency key of a firing's run: one run per schedule and firing time. */
export function firingIdempotencyKey(scheduleId: string, fireTime: Date): string {
  return `schedule:${scheduleId}:${fireTime.toISOString()}`;
}

/** What the overlap rule says of a firing of `schedule` in `situation`, and why when it is not a start. */
function judge(
  schedule: ScheduleRecord,
  { previous, otherBuffered }: FiringSituationRead,
): { move: FiringMove; note?: string } {
  const move = firingMove({
    overlap: schedule.overlap,
    previousStatus: previous?.status,
    otherBuffered,
  });
  if (move === 'start') return { move };
  if (!previous) return { move, note: 'another firing is buffered already' };
  return {
    move,
    note:
      previous.runId === null
        ? 'previous run is being created'
        : `previous run ${previous.runId} is ${previous.status}`,
  };
}

function runRequestOf(schedule: ScheduleRecord, fireTime: Date): CreateRunRequest {
  const fields = schedule.runFields as Partial<CreateScheduleBody>;
  return createRunRequestOf(
    schedule.entity,
    { ...fields, input: schedule.input },
    {
      tenantId: schedule.tenantId,
      idempotencyKey: firingIdempotencyKey(schedule.scheduleId, fireTime),
    },
  );
}

function runFieldsOf(body: Partial<CreateScheduleBody>): Record<string, unknown> {
  return Object.fromEntries(
    RUN_FIELD_NAMES.filter((name) => body[name] !== undefined).map((name) => [name, body[name]]),
  );
}

function timingOf(body: {
  cron?: string;
  timezone?: string;
  every_ms?: number;
}): ScheduleTiming | undefined {
  if (body.cron !== undefined)
    return { cron: body.cron, timezone: body.timezone ?? DEFAULT_SCHEDULE_TIMEZONE };
  if (body.every_ms !== undefined) return { everyMs: body.every_ms };
  return undefined;
}

function outcomeOf(move: FiringMove): FiringRecord['outcome'] {
  return move === 'start' ? 'started' : move === 'skip' ? 'skipped' : 'buffered';
}

function scheduleNotFound(scheduleId: string): NotFoundError {
  return new NotFoundError(`no schedule ${JSON.stringify(scheduleId)}`);
}
