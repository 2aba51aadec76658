import { randomBytes } from 'node:crypto';
import type { JobsOptions } from 'bullmq';
import { z } from 'zod';
import { ENTITY_KINDS } from '@cairn/engine';
import { CONTINUE_JOB_REASONS } from '@cairn/engine/lifecycle';
import { InvalidJobError } from './errors.js';

/**
 * Marks a job handed back at shutdown: the pickup whose `attemptsStarted` is
 * this value + 1 claims the run with reason `handover`.
 */
const handoverAttempt = z.number().int().nonnegative().optional();

/**
 * Marks a job parked for model capacity (delayed until the limit expects
 * room): the pickup whose `attemptsStarted` is this value + 1 claims the run
 * with reason `capacity`; `waitingSince` (ms since the epoch) is when its
 * wait began, which keeps its age across parks.
 */
const parked = {
  parkedAttempt: z.number().int().nonnegative().optional(),
  waitingSince: z.number().int().nonnegative().optional(),
  /** The model and its waiter in line (a member run's, for a team): asked of the limiter before the next pickup claims the run. */
  parkedFor: z
    .object({
      model: z.string().min(1),
      waiter: z.object({
        id: z.string().min(1),
        tenant: z.string(),
        priority: z.number().int().min(1).max(10),
      }),
    })
    .optional(),
};

/** The run's priority, 1 (highest) to 10: its order within its tenant's fair line. */
const priority = z.number().int().min(1).max(10).optional();

/** The run's tenant (null: an admin key's): set on a job that joins its tenant's fair line (`fair-line.ts`). */
const tenant = z.string().nullable().optional();

/**
 * The run's entity, on its first job: its worker asks the limiter for the entity's model (a team's
 * own, its first request) before the first claim (docs/capacity.md, "Before the first claim").
 */
const entity = z.object({ kind: z.enum(ENTITY_KINDS), name: z.string().min(1) }).optional();

/**
 * Every job the run queue carries: its data schema and its options. A schema tolerates fields it
 * does not know (zod's default: they are left out of the parsed data, and kept on the job itself),
 * so during a rolling deploy an older worker runs a job a newer producer or worker added a field to
 * (docs/operations.md, "Upgrading with runs in flight"); a field it knows is still checked.
 */
export const JOB_CATALOG = {
  run: {
    schema: z.object({ runId: z.uuid(), handoverAttempt, ...parked, tenant, priority, entity }),
  },
  continue: {
    schema: z.object({
      runId: z.uuid(),
      reason: z.enum(CONTINUE_JOB_REASONS),
      /** Set on the resume a decision enqueues: the epoch the run paused in, which the job id is derived from. */
      resumeOf: z.number().int().nonnegative().optional(),
      handoverAttempt,
      ...parked,
      tenant,
      priority,
    }),
  },
  /** Expires a pending action at its `expires_at` (delayed until then); `runId` is its tree's root run. */
  expire: {
    schema: z.object({
      runId: z.uuid(),
      actionId: z.string().min(1),
      expiresAt: z.iso.datetime(),
    }),
  },
} as const;

/** A job name of {@link JOB_CATALOG}. */
export type JobName = keyof typeof JOB_CATALOG;

/** The data of the job named `N`. */
export type JobData<N extends JobName> = z.infer<(typeof JOB_CATALOG)[N]['schema']>;

/** A validated job: its name and its data. */
export type CatalogJob = { [N in JobName]: { name: N; data: JobData<N> } }[JobName];

/** Options every job gets: no retry storms, completed jobs visible in Bull Board for a day. */
export const DEFAULT_JOB_OPTIONS = {
  attempts: 5,
  backoff: { type: 'exponential', delay: 1000 },
  removeOnComplete: { age: 24 * 3600, count: 1000 },
  removeOnFail: { age: 7 * 24 * 3600, count: 5000 },
} as const satisfies JobsOptions;

/** Validates `data` against the schema of job `name`; throws {@link InvalidJobError}. */
export function parseJob(name: string, data: unknown): CatalogJob {
  if (!Object.hasOwn(JOB_CATALOG, name)) throw new InvalidJobError(name, 'unknown job name');
  const result = JOB_CATALOG[name as JobName].schema.safeParse(data);
  if (!result.success) {
    throw new InvalidJobError(
      name,
      result.error.issues.map((i) => `${i.path.join('.') || '(data)'}: ${i.message}`).join('; '),
    );
  }
  return { name, data: result.data } as CatalogJob;
}

/**
 * The key that keeps one live job per run: BullMQ's deduplication id, held
 * from the add until the job completes, fails or is removed.
 */
export function runDedupId(runId: string): string {
  return `run-${runId}`;
}

/**
 * The resume of a paused tree whose every action is decided: a `continue` of
 * its root run whose job id derives from the epoch it paused in, so the
 * decision, the expiry and the reconciler that may all ask for it enqueue it
 * once; with `place` (the root's tenant and priority) it takes a slot in the
 * tenant's fair line.
 */
export function resumeJob(
  rootRunId: string,
  pausedEpoch: number,
  place: { tenant?: string | null; priority?: number } = {},
): CatalogJob {
  return {
    name: 'continue',
    data: { runId: rootRunId, reason: 'continue', resumeOf: pausedEpoch, ...place },
  };
}

/** True for a job that joins its tenant's fair line: its BullMQ priority is its slot there. */
export function joinsFairLine(
  job: CatalogJob,
): job is Extract<CatalogJob, { name: 'run' | 'continue' }> & { data: { tenant: string | null } } {
  return job.name !== 'expire' && job.data.tenant !== undefined;
}

/**
 * Job id and options for a job (`queuePriority`: its slot in its tenant's
 * fair line, for a job that {@link joinsFairLine}). `expire` jobs are `expire-<actionId>`,
 * delayed until the action's `expires_at`. `run` jobs are `run-<runId>`; the resume of a
 * paused run is `continue-<runId>-resume-<pausedEpoch>` (one per pause, so
 * two producers deciding at once enqueue it once); every other `continue`
 * gets a fresh id (`continue-<runId>-<suffix>`, no ':' which BullMQ forbids),
 * so a later continue is enqueueable while earlier ones stay visible.
 */
export function jobOptionsFor(job: CatalogJob, queuePriority?: number): JobsOptions {
  if (job.name === 'expire') {
    // Not deduplicated with the run's jobs: it must never hold back the resume it may enqueue.
    const delay = Math.max(0, Date.parse(job.data.expiresAt) - Date.now());
    return { ...DEFAULT_JOB_OPTIONS, jobId: `expire-${job.data.actionId}`, delay };
  }
  const jobId =
    job.name === 'run'
      ? `run-${job.data.runId}`
      : job.data.resumeOf !== undefined
        ? `continue-${job.data.runId}-resume-${job.data.resumeOf}`
        : `continue-${job.data.runId}-${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  return {
    ...DEFAULT_JOB_OPTIONS,
    jobId,
    deduplication: { id: runDedupId(job.data.runId) },
    ...(queuePriority !== undefined && { priority: queuePriority }),
  };
}
