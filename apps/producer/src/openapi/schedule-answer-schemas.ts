import { CHECKPOINT_MODES, RUN_STATUSES } from '@cairn/engine';
import { SCHEDULE_OVERLAPS } from '@cairn/engine/lifecycle';
import { z } from 'zod';

const timestamp = z.string().describe('ISO 8601');

/** A schedule as `/v1/schedules` answers it: what it starts, when, and its overlap policy. */
export const scheduleSchema = z.object({
  schedule_id: z.string(),
  entity: z.object({ kind: z.enum(['agent', 'team']), name: z.string() }),
  input: z.string(),
  session_id: z.string().optional(),
  user_id: z.string().optional(),
  checkpoint: z.enum(CHECKPOINT_MODES).optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  priority: z.number().optional(),
  deadline_ms: z.number().optional(),
  budget: z
    .object({
      max_tokens: z.number().optional(),
      max_cost_usd: z.number().optional(),
      decision_timeout_ms: z.number().optional(),
    })
    .optional(),
  cron: z.string().nullable(),
  timezone: z.string().nullable(),
  every_ms: z.number().nullable(),
  overlap: z.enum(SCHEDULE_OVERLAPS),
  paused: z.boolean(),
  created_at: timestamp,
  updated_at: timestamp,
});

/** One firing of a schedule: its time, what it did, and the run it started. */
export const firingSchema = z.object({
  fire_time: timestamp,
  outcome: z.enum(['started', 'skipped', 'buffered']),
  run_id: z.string().nullable(),
  run_status: z.enum(RUN_STATUSES).nullable(),
  note: z.string().nullable().describe('Why it was skipped'),
});

/** A schedule with its next firing times (none while paused) and its latest firings, newest first. */
export const scheduleDetailSchema = scheduleSchema.extend({
  next_fire_times: z.array(timestamp),
  recent_firings: z.array(firingSchema),
});

/** `GET /v1/schedules`. */
export const scheduleListSchema = z.object({ schedules: z.array(scheduleSchema) });
