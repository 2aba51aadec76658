import { MIN_SCHEDULE_EVERY_MS } from '@cairn/queue';
import { MAX_SCHEDULES_LISTED } from '../routes/schedule-routes.js';
import { createScheduleBodySchema, updateScheduleBodySchema } from '../schedule-schemas.js';
import type { ApiOperation, ApiParameter } from './api-operations.js';
import {
  scheduleDetailSchema,
  scheduleListSchema,
  scheduleSchema,
} from './schedule-answer-schemas.js';

const BODY_ERRORS: Readonly<Record<number, string>> = {
  400: 'invalid_body (with issues naming each field: cron, timezone, every_ms, entity, ...), or invalid_json',
  413: 'payload_too_large: the body is over the limit (default 1 MiB)',
  415: 'unsupported_media_type: a non-empty body that is not application/json',
};

const scheduleId: ApiParameter = {
  name: 'schedule_id',
  in: 'path',
  required: true,
  description: "The schedule's id; another tenant's schedule is a 404",
  schema: { type: 'string' },
};

const NOT_FOUND = 'not_found: no such schedule for this tenant';

const TOO_LONG = "field_too_long: input or metadata over the runs' limits (CAIRN_MAX_INPUT_CHARS)";

/** The `/v1/schedules` operations. */
export const SCHEDULE_OPERATIONS: readonly ApiOperation[] = [
  {
    method: 'post',
    path: '/v1/schedules',
    operationId: 'createSchedule',
    tag: 'schedules',
    summary: 'Create a schedule',
    description: `Starts a run of the entity at each firing: \`cron\` (read in \`timezone\`, default UTC) or \`every_ms\` (at least ${MIN_SCHEDULE_EVERY_MS}). \`overlap\`: \`skip\` (default) records a skipped firing while the previous run is unfinished, \`buffer_one\` starts one firing once it ends, \`allow\` always starts. A firing delivered twice starts one run.`,
    body: { schema: createScheduleBodySchema, required: true },
    answers: {
      201: { description: 'Created (its job scheduler too, unless paused)', json: scheduleSchema },
    },
    errors: { ...BODY_ERRORS, 422: TOO_LONG },
  },
  {
    method: 'get',
    path: '/v1/schedules',
    operationId: 'listSchedules',
    tag: 'schedules',
    summary: "List the key's schedules",
    parameters: [
      {
        name: 'limit',
        in: 'query',
        description: `How many, newest first (default 100)`,
        schema: { type: 'integer', minimum: 1, maximum: MAX_SCHEDULES_LISTED },
      },
    ],
    answers: { 200: { description: 'The schedules', json: scheduleListSchema } },
    errors: { 400: 'invalid_parameter: a bad limit' },
  },
  {
    method: 'get',
    path: '/v1/schedules/{schedule_id}',
    operationId: 'getSchedule',
    tag: 'schedules',
    summary: 'Read a schedule, its next firings and its latest ones',
    parameters: [scheduleId],
    answers: { 200: { description: 'The schedule', json: scheduleDetailSchema } },
    errors: { 404: NOT_FOUND },
  },
  {
    method: 'patch',
    path: '/v1/schedules/{schedule_id}',
    operationId: 'updateSchedule',
    tag: 'schedules',
    summary: 'Change, pause or resume a schedule',
    description:
      'Any field of a create; `cron` replaces `every_ms` and the other way round. `paused: true` removes the job scheduler, `paused: false` makes it again.',
    parameters: [scheduleId],
    body: { schema: updateScheduleBodySchema, required: true },
    answers: { 200: { description: 'The schedule as changed', json: scheduleSchema } },
    errors: { ...BODY_ERRORS, 404: NOT_FOUND, 422: TOO_LONG },
  },
  {
    method: 'delete',
    path: '/v1/schedules/{schedule_id}',
    operationId: 'deleteSchedule',
    tag: 'schedules',
    summary: 'Delete a schedule',
    description: 'Removes the schedule and its job scheduler; the runs it started stay.',
    parameters: [scheduleId],
    answers: { 204: { description: 'Deleted', empty: true } },
    errors: { 404: NOT_FOUND },
  },
];

/** The schedules' named schemas of the document's components. */
export const SCHEDULE_SCHEMAS = {
  CreateScheduleBody: createScheduleBodySchema,
  UpdateScheduleBody: updateScheduleBodySchema,
  Schedule: scheduleSchema,
  ScheduleDetail: scheduleDetailSchema,
  ScheduleList: scheduleListSchema,
};
