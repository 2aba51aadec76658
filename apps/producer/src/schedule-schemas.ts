import { SCHEDULE_OVERLAPS } from '@cairn/engine/lifecycle';
import { MIN_SCHEDULE_EVERY_MS, timingProblem } from '@cairn/queue';
import { z } from 'zod';
import { createRunBodySchema } from './request-schemas.js';

/** The entity a schedule starts runs of. */
const scheduleEntity = z.strictObject({
  kind: z.enum(['agent', 'team']),
  name: z.string().min(1).max(200),
});

/** The run a schedule starts: its entity and the create fields of `POST /v1/{agents,teams}/:name/runs`. */
const scheduledRunFields = createRunBodySchema.extend({ entity: scheduleEntity });

/** When and how a schedule fires: `cron` with `timezone`, or `every_ms`; `overlap`; `paused`. */
const firingFields = {
  /** A cron pattern (5 fields, or 6 with seconds first), read in `timezone`. */
  cron: z.string().min(1).max(200).optional(),
  /** The IANA time zone `cron` is read in. @defaultValue "UTC" */
  timezone: z.string().min(1).max(100).optional(),
  /** An interval in ms, at least {@link MIN_SCHEDULE_EVERY_MS}. */
  every_ms: z.number().int('must be an integer number of milliseconds').optional(),
  /** What a firing does while the schedule's previous run is unfinished. @defaultValue "skip" */
  overlap: z.enum(SCHEDULE_OVERLAPS).optional(),
  /** A paused schedule does not fire until it is resumed (`paused: false`). @defaultValue false */
  paused: z.boolean().optional(),
};

/** Body of `POST /v1/schedules`. */
export const createScheduleBodySchema = scheduledRunFields
  .extend(firingFields)
  .superRefine((body, ctx) => checkTiming(body, ctx, true));

/** Body of `PATCH /v1/schedules/:schedule_id`: any field of a create; `cron` replaces `every_ms` and the other way round. */
export const updateScheduleBodySchema = scheduledRunFields
  .partial()
  .extend(firingFields)
  .superRefine((body, ctx) => checkTiming(body, ctx, false));

/** A parsed create-schedule body. */
export type CreateScheduleBody = z.infer<typeof createScheduleBodySchema>;

/** A parsed update-schedule body. */
export type UpdateScheduleBody = z.infer<typeof updateScheduleBodySchema>;

/** The run create fields a schedule stores with its runs, as the API names them. */
export const RUN_FIELD_NAMES = [
  'session_id',
  'user_id',
  'checkpoint',
  'metadata',
  'priority',
  'deadline_ms',
  'budget',
] as const;

/** The time zone a cron pattern is read in when none is given. */
export const DEFAULT_SCHEDULE_TIMEZONE = 'UTC';

/** One timing (cron or every_ms, required on create), each valid: issues name the field. */
function checkTiming(
  body: { cron?: string; timezone?: string; every_ms?: number },
  ctx: z.RefinementCtx,
  required: boolean,
): void {
  const issue = (field: string, message: string) =>
    ctx.addIssue({ code: 'custom', path: [field], message });
  if (body.cron !== undefined && body.every_ms !== undefined)
    return issue('every_ms', 'give cron (with timezone) or every_ms, not both');
  if (body.timezone !== undefined && body.cron === undefined)
    return issue('timezone', 'goes with cron');
  if (body.cron === undefined && body.every_ms === undefined) {
    if (required)
      issue('cron', `give cron (with timezone) or every_ms (at least ${MIN_SCHEDULE_EVERY_MS})`);
    return;
  }
  const problem = timingProblem(
    body.cron !== undefined
      ? { cron: body.cron, timezone: body.timezone ?? DEFAULT_SCHEDULE_TIMEZONE }
      : { everyMs: body.every_ms! },
  );
  if (problem) issue(problem.field, problem.problem);
}
