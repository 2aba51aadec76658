import { segment, type HttpTransport, type RequestOptions } from './http-transport.js';
import type { BudgetParams, CheckpointMode, EntityRef, RunStatus } from './types.js';

/** What a schedule does with a firing while its previous run is unfinished: `skip` it, `allow` it, or `buffer_one` (start it once that run ends; at most one waits). */
export type ScheduleOverlap = 'skip' | 'allow' | 'buffer_one';

/** The run a schedule starts at each firing: the entity, and the create fields of a run. */
export interface ScheduledRunFields {
  entity: EntityRef;
  input: string;
  session_id?: string;
  user_id?: string;
  checkpoint?: CheckpointMode;
  metadata?: Record<string, unknown>;
  priority?: number;
  deadline_ms?: number;
  budget?: BudgetParams;
}

/** What `schedules.create` sends: the run, `cron` (read in `timezone`, default UTC) or `every_ms` (at least 1000), `overlap`, `paused`. */
export type CreateScheduleParams = ScheduledRunFields & {
  overlap?: ScheduleOverlap;
  paused?: boolean;
} & (
    | { cron: string; timezone?: string; every_ms?: never }
    | { every_ms: number; cron?: never; timezone?: never }
  );

/** What `schedules.update` sends: any field of a create; `cron` replaces `every_ms` and the other way round; `paused` pauses or resumes. */
export type UpdateScheduleParams = Partial<ScheduledRunFields> & {
  cron?: string;
  timezone?: string;
  every_ms?: number;
  overlap?: ScheduleOverlap;
  paused?: boolean;
};

/** A schedule as the API answers it. */
export interface Schedule extends ScheduledRunFields {
  schedule_id: string;
  cron: string | null;
  timezone: string | null;
  every_ms: number | null;
  overlap: ScheduleOverlap;
  paused: boolean;
  created_at: string;
  updated_at: string;
}

/** One firing of a schedule: when, what it did, and the run it started. */
export interface ScheduleFiring {
  fire_time: string;
  outcome: 'started' | 'skipped' | 'buffered';
  run_id: string | null;
  run_status: RunStatus | null;
  /** Why it was skipped. */
  note: string | null;
}

/** A schedule with its next firing times (none while paused) and its latest firings, newest first. */
export interface ScheduleDetail extends Schedule {
  next_fire_times: string[];
  recent_firings: ScheduleFiring[];
}

/** The schedules API (`/v1/schedules`): a tenant's key sees its tenant's schedules only. */
export interface SchedulesApi {
  /** Creates a schedule; an invalid cron, time zone, interval or entity throws `BadRequest` naming the field. */
  create(params: CreateScheduleParams, options?: RequestOptions): Promise<Schedule>;
  /** The key's schedules, newest first (at most `limit`, default 100). */
  list(options?: RequestOptions & { limit?: number }): Promise<Schedule[]>;
  /** A schedule with its next and latest firings; throws `NotFound`. */
  get(scheduleId: string, options?: RequestOptions): Promise<ScheduleDetail>;
  /** Changes, pauses (`paused: true`) or resumes a schedule; throws `NotFound`, `BadRequest`. */
  update(
    scheduleId: string,
    params: UpdateScheduleParams,
    options?: RequestOptions,
  ): Promise<Schedule>;
  /** Deletes a schedule; the runs it started stay. Throws `NotFound`. */
  delete(scheduleId: string, options?: RequestOptions): Promise<void>;
}

/** The schedules API on `http`. */
export function schedulesApi(http: HttpTransport): SchedulesApi {
  return {
    create: (params, request) => http.json('POST', '/v1/schedules', params, request),
    list: async ({ limit, ...request } = {}) =>
      (
        await http.json<{ schedules: Schedule[] }>(
          'GET',
          `/v1/schedules${limit === undefined ? '' : `?limit=${limit}`}`,
          undefined,
          request,
        )
      ).schedules,
    get: (scheduleId, request) =>
      http.json('GET', `/v1/schedules/${segment(scheduleId)}`, undefined, request),
    update: (scheduleId, params, request) =>
      http.json('PATCH', `/v1/schedules/${segment(scheduleId)}`, params, request),
    delete: async (scheduleId, request) => {
      await http.send('DELETE', `/v1/schedules/${segment(scheduleId)}`, {
        signal: request?.signal,
        headers: request?.headers,
      });
    },
  };
}
