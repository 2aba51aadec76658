import { assertNever } from '../errors.js';
import type { TreeResume } from '../hitl/pending-action.js';
import type { AttemptReason, CreatedRun, EntityRef, RunRecord } from '../run-types.js';
import type { ContinueDecision } from './continue-rules.js';

/**
 * A job of the run queue, as the lifecycle asks for it: the job catalog's
 * names (`run`, `continue`, `expire`) with their data. The queue derives the
 * job id and options (deduplication per run, the delay of an `expire`).
 */
export type JobSpec =
  /** A run's first execution (a new run, or a fork). */
  | {
      name: 'run';
      runId: string;
      /** The run's tenant (null: an admin key's): the job joins its tenant's fair line. */
      tenant?: string | null;
      /** The run's priority (1 highest to 10): its order within its tenant's line. */
      priority?: number;
      /** The run's entity: its pickup asks the limiter for the entity's model before the first claim. */
      entity?: EntityRef;
    }
  /**
   * Another execution of a run. `resumeOf`: the resume of a paused tree whose
   * every action is decided, with the epoch it paused in (one job per pause).
   * `tenant` and `priority` ({@link fairLinePlaceOf}): the job joins its
   * tenant's fair line like a new run's (a continue request, a resume after a
   * decision, an expiry or a recovery); without them (a hand-over) it goes
   * ahead of the line.
   */
  | {
      name: 'continue';
      runId: string;
      reason: Exclude<AttemptReason, 'run' | 'capacity'>;
      resumeOf?: number;
      tenant?: string | null;
      priority?: number;
    }
  /** The expiry of a pending action, delayed until its `expiresAt` (ISO 8601); `runId` is its tree's root run. */
  | { name: 'expire'; runId: string; actionId: string; expiresAt: string };

/** Why the lifecycle asks for a job: what a log line or a test names it by. */
export type IntentCause =
  | 'created'
  | 'continued'
  | 'forked'
  | 'decided'
  | 'paused'
  | 'expired'
  | 'recovered-live'
  | 'recovered-paused'
  | 'recovered-overdue'
  | 'cancelled'
  | 'suspended';

/**
 * A move of a run that needs the queue, returned by the lifecycle for the
 * queue to carry out (`RunEngine` in `@cairn/queue`), as plain data
 * (it may cross a thread, and shows in Bull Board as part of a job's result).
 */
export type JobIntent =
  | {
      kind: 'enqueue';
      job: JobSpec;
      cause: IntentCause;
      /** Only when the run has no live job now: nothing is added (nor reported added) while one is. @defaultValue false */
      onlyWithoutLiveJob?: boolean;
      /** Replace an ended job (failed, or completed without finishing the run) that holds the job's id. @defaultValue false */
      replaceEnded?: boolean;
    }
  /** Remove the job `jobId` of the run (a queued run that was cancelled); a job that is gone or locked is left. */
  | { kind: 'remove-job'; runId: string; jobId: string; cause: IntentCause };

/** What carrying out one {@link JobIntent} did. */
export type IntentResult = 'added' | 'had-live-job' | 'removed';

/** The run's job that still holds it, as the lifecycle sees it. */
export interface LiveJob {
  jobId: string;
  /** True while a worker executes it; false while it waits (queued, delayed). */
  active: boolean;
}

/** The queue as the lifecycle's moves use it: it carries out intents, in order, and tells a run's live job. */
export interface JobPort {
  /** Carries out `intents` in order; one result per intent. */
  carryOut(intents: readonly JobIntent[]): Promise<IntentResult[]>;
  /** The run's job that is waiting, delayed or active, if any. */
  liveJobOf(runId: string): Promise<LiveJob | undefined>;
}

/**
 * A run's place in its tenant's fair line, as a job asks for it: the run's
 * tenant and priority. Every job that queues a run for new work or a resume
 * takes it from here, so all of them wait in the same line.
 */
export function fairLinePlaceOf(run: Pick<RunRecord, 'tenantId' | 'priority'>): {
  tenant: string | null;
  priority: number;
} {
  return { tenant: run.tenantId, priority: run.priority };
}

/**
 * The resume of a paused tree whose every action is decided: a `continue` of
 * its root run whose job is one per pause (`pausedEpoch`), so a decision, an
 * expiry and recovery that all ask for it enqueue it once; it takes a slot in
 * the root's tenant's fair line.
 */
export function resumeIntent(
  resume: TreeResume,
  cause: 'decided' | 'expired' | 'recovered-paused' | 'recovered-overdue',
): JobIntent {
  const job: JobSpec = {
    name: 'continue',
    runId: resume.rootRunId,
    reason: 'continue',
    resumeOf: resume.pausedEpoch,
    ...fairLinePlaceOf(resume),
  };
  // Recovery finds resumes whose job may have run out of retries (left for another definition's workers): it replaces it.
  const recovering = cause === 'recovered-paused' || cause === 'recovered-overdue';
  return {
    kind: 'enqueue',
    job,
    cause,
    ...(recovering && { replaceEnded: true }),
    ...(cause === 'recovered-paused' && { onlyWithoutLiveJob: true }),
  };
}

/** A created run's first job: its `run` job, none when the request replayed a run created before (it has its job). */
export function createdRunIntents(run: CreatedRun): JobIntent[] {
  return run.replayed
    ? []
    : [
        {
          kind: 'enqueue',
          job: { name: 'run', runId: run.runId, ...fairLinePlaceOf(run), entity: run.entity },
          cause: 'created',
        },
      ];
}

/**
 * The job a continue decision asks for: a resume in place a `continue` (its
 * input is stored with the continue request, not in the job; a no-op while
 * the run has a live job), a fork the `run` job of the new run, an
 * already-queued run none.
 */
export function continueIntents(decision: ContinueDecision): JobIntent[] {
  switch (decision.action) {
    case 'resume':
      return [
        {
          kind: 'enqueue',
          job: {
            name: 'continue',
            runId: decision.run.runId,
            reason: 'continue',
            ...fairLinePlaceOf(decision.run),
          },
          cause: 'continued',
        },
      ];
    case 'fork':
      return [
        {
          kind: 'enqueue',
          job: {
            name: 'run',
            runId: decision.run.runId,
            ...fairLinePlaceOf(decision.run),
            entity: decision.run.entity,
          },
          cause: 'forked',
        },
      ];
    case 'already-queued':
      return [];
    default:
      return assertNever(decision);
  }
}
