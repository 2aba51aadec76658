import type { FiringView, ScheduleRecord } from '@cairn/store';
import { Hono } from 'hono';
import { requestPrincipal } from '../api-key-auth.js';
import { integerParameter } from '../integer-parameter.js';
import { jsonBody } from '../json-body.js';
import { assertFieldsFit, type RunLimits } from '../run-limits.js';
import { createScheduleBodySchema, updateScheduleBodySchema } from '../schedule-schemas.js';
import type { ScheduleDetail, ScheduleService } from '../schedule-service.js';

/** The most schedules one list answers. */
export const MAX_SCHEDULES_LISTED = 500;

/**
 * `POST/GET /v1/schedules`, `GET/PATCH/DELETE /v1/schedules/:schedule_id`: a key bound to a
 * tenant creates and sees its tenant's schedules only (another tenant's is a 404); an admin key
 * sees every one. `input` and `metadata` are held to the runs' `limits`.
 */
export function scheduleRoutes(service: ScheduleService, limits: RunLimits): Hono {
  const app = new Hono();
  const scope = (c: Parameters<typeof requestPrincipal>[0]) => ({
    tenantId: requestPrincipal(c).tenantId,
  });

  app.post('/schedules', async (c) => {
    const body = await jsonBody(c, createScheduleBodySchema);
    // The runs' own limits: an input or metadata no run could be created with is refused now (422).
    assertFieldsFit(body, limits);
    const schedule = await service.create(scope(c), body);
    return c.json(scheduleJson(schedule), 201);
  });

  app.get('/schedules', async (c) => {
    const raw = c.req.query('limit');
    const limit =
      raw === undefined
        ? 100
        : integerParameter('limit', raw, { min: 1, max: MAX_SCHEDULES_LISTED });
    const schedules = await service.list(scope(c), limit);
    return c.json({ schedules: schedules.map(scheduleJson) });
  });

  app.get('/schedules/:schedule_id', async (c) => {
    const detail = await service.get(scope(c), c.req.param('schedule_id'));
    return c.json(scheduleDetailJson(detail));
  });

  app.patch('/schedules/:schedule_id', async (c) => {
    const body = await jsonBody(c, updateScheduleBodySchema);
    assertFieldsFit(body, limits);
    const schedule = await service.update(scope(c), c.req.param('schedule_id'), body);
    return c.json(scheduleJson(schedule));
  });

  app.delete('/schedules/:schedule_id', async (c) => {
    await service.delete(scope(c), c.req.param('schedule_id'));
    return c.body(null, 204);
  });

  return app;
}

/** A schedule as the API answers it (snake_case, the run create fields beside `entity` and `input`). */
export function scheduleJson(schedule: ScheduleRecord) {
  const { timing } = schedule;
  return {
    schedule_id: schedule.scheduleId,
    entity: schedule.entity,
    input: schedule.input,
    ...schedule.runFields,
    cron: 'cron' in timing ? timing.cron : null,
    timezone: 'cron' in timing ? timing.timezone : null,
    every_ms: 'everyMs' in timing ? timing.everyMs : null,
    overlap: schedule.overlap,
    paused: schedule.paused,
    created_at: schedule.createdAt.toISOString(),
    updated_at: schedule.updatedAt.toISOString(),
  };
}

/** A schedule with its next firing times and its latest firings. */
export function scheduleDetailJson(detail: ScheduleDetail) {
  return {
    ...scheduleJson(detail.schedule),
    next_fire_times: detail.nextFireTimes.map((ms) => new Date(ms).toISOString()),
    recent_firings: detail.recentFirings.map(firingJson),
  };
}

function firingJson(firing: FiringView) {
  return {
    fire_time: firing.fireTime.toISOString(),
    outcome: firing.outcome,
    run_id: firing.runId,
    run_status: firing.runStatus,
    note: firing.note,
  };
}
