import { DelayedError, UnrecoverableError, WaitingError } from 'bullmq';
import type { Job } from 'bullmq';
import { assertNever, dispositionOfError, type CapacityPark } from '@cairn/engine/lifecycle';
import {
  DEFAULT_CAPACITY_WAIT_MS,
  parkAgainFor,
  type CapacitySettings,
  type EntityRef,
  type RunWaiting,
} from '@cairn/engine';
import type { RunExecutor, RunJobOutcome, RunJobRequest, WorkerLogger } from '@cairn/runtime';
import { InvalidJobError } from './errors.js';
import { parseJob, type CatalogJob } from './job-catalog.js';
import type { RunEngine, RunEngineDeps } from './run-engine.js';

/** What a processed job returns (shown in Bull Board). */
export type JobResult = Exclude<
  RunJobOutcome,
  { kind: 'handed-over' } | { kind: 'lease-lost' } | { kind: 'parked' }
>;

/**
 * Translates a catalog job into the work an executor runs: a `run` or
 * `continue` job is the engine's pickup (with BullMQ's attempt count), an
 * `expire` job the expiry of its pending action.
 */
export function workOf(
  job: CatalogJob,
  attemptsStarted: number,
  now = Date.now(),
): RunJobRequest['work'] {
  if (job.name === 'expire')
    return { job: 'expire', runId: job.data.runId, actionId: job.data.actionId };
  const { runId, handoverAttempt, parkedAttempt, waitingSince } = job.data;
  const marks = {
    ...(handoverAttempt !== undefined && { handoverAttempt }),
    ...(parkedAttempt !== undefined && { parkedAttempt }),
    ...(waitingSince !== undefined && { capacityWaitedMs: Math.max(0, now - waitingSince) }),
  };
  if (job.name === 'run') return { job: 'run', runId, attemptsStarted, ...marks };
  return { job: 'continue', runId, reason: job.data.reason, attemptsStarted, ...marks };
}

/** A pickup delayed again before its claim: for how long, and what its job's data gains (a first pickup's park). */
interface ParkAgain {
  delayMs: number;
  marks?: { waitingSince: number; parkedFor: ParkedFor };
}

/** A parked job's model and waiter in line. */
type ParkedFor = NonNullable<Extract<CatalogJob, { name: 'run' }>['data']['parkedFor']>;

/** What {@link createRunProcessor} needs. */
export interface RunProcessorDeps {
  executor: RunExecutor;
  logger: WorkerLogger;
  /** The worker's side of the run engine: carries out an execution's intents, parks a job. */
  runs: RunEngine<RunEngineDeps>;
  /** True once the worker is shutting down: new pickups are handed straight back. */
  isClosing(): boolean;
  /**
   * The fleet's model capacity: a job back from a park whose waiter could not have its permit
   * within the capacity wait is delayed again without a claim (`parkAgainFor`). Without it, every
   * such pickup claims the run.
   */
  capacity?: CapacitySettings;
  /**
   * The model of an entity this worker serves (a team's own): a run's first pickup asks the limiter
   * for it before the claim. Undefined (an entity it does not serve): the pickup claims the run.
   */
  modelOf?: (entity: EntityRef) => string | undefined;
  /**
   * Records that a run's job is delayed again before its claim: the run's view shows the wait (a
   * RUNNING run parked for capacity, or a PENDING run held in line before its first claim). Resolves
   * true when the run's deadline has passed: the pickup then claims it, and the claim ends it.
   */
  parkedAgain?: (runId: string, waiting: RunWaiting) => Promise<boolean>;
}

/**
 * The BullMQ processor: validates the job, has the executor run it, and maps
 * the outcome to BullMQ: a hand-back returns the job to the queue for another
 * worker; a lost lease stops without completing or failing the job under its
 * new owner (BullMQ's token check refuses this worker's write).
 */
export function createRunProcessor(deps: RunProcessorDeps) {
  const { executor, logger } = deps;
  return async (job: Job, token?: string): Promise<JobResult> => {
    let parsed;
    try {
      parsed = parseJob(job.name, job.data);
    } catch (error) {
      if (error instanceof InvalidJobError) throw new UnrecoverableError(error.message);
      throw error;
    }
    if (deps.isClosing()) return handBack(job, token, false);
    const again = await parkAgainMs(job, parsed);
    if (again !== undefined) return parkAgain(job, token, again);
    const outcome = await executor
      .execute({
        work: workOf(parsed, job.attemptsStarted),
        jobId: job.id,
        trace: job.opts.telemetry?.metadata,
      })
      .outcome.catch((error: unknown) => toBullMQ(error));
    switch (outcome.kind) {
      case 'handed-over':
        return handBack(job, token, true);
      case 'parked':
        return park(job, token, outcome.park);
      case 'lease-lost':
        throw new UnrecoverableError(outcome.message);
      case 'finished':
      case 'expired':
      case 'skipped':
      case 'cancelled-at-claim':
        await deps.runs.afterExecution(outcome.intents);
        return outcome;
      default:
        return assertNever(outcome);
    }
  };

  /**
   * The one mapping of an execution's error to BullMQ: `retry-job` fails the
   * attempt so BullMQ retries it (resuming from the last checkpoint);
   * `stop-silently` fails it for good (another execution holds the run).
   * `end-run-in-error` is the engine's to persist; if one reaches here the
   * engine could not write it, so the job is retried and the next pickup does.
   */
  function toBullMQ(error: unknown): never {
    const disposition = dispositionOfError(error);
    switch (disposition) {
      case 'retry-job':
      case 'end-run-in-error':
        throw error;
      case 'stop-silently':
        throw new UnrecoverableError(error instanceof Error ? error.message : String(error));
      default:
        return assertNever(disposition);
    }
  }

  /** Parks the job for model capacity ({@link RunEngine.park}). */
  async function park(job: Job, token: string | undefined, park: CapacityPark): Promise<never> {
    await deps.runs.park({ job, token }, park);
    logger.info(
      { runId: (job.data as { runId?: string }).runId, jobId: job.id, ...park },
      'run parked for model capacity',
    );
    throw new DelayedError();
  }

  /**
   * For a pickup back from a park (its next claim's reason `capacity`), or a run's first pickup
   * (docs/capacity.md, "Before the first claim"): how long to delay it again, or undefined to
   * claim it.
   */
  async function parkAgainMs(job: Job, parsed: CatalogJob): Promise<ParkAgain | undefined> {
    if (!deps.capacity || parsed.name === 'expire') return undefined;
    const ask = askOf(job, parsed);
    if (!ask) return undefined;
    const now = Date.now();
    // Its place in line: as old as its job (a run's first is its creation), or its wait if longer, as the gate asks.
    const waitedMs = Math.max(0, now - (ask.waitingSince ?? now), now - job.timestamp);
    // A first pickup told a wait within the capacity wait claims and waits in place, as its gate
    // would: held in line instead, it would wait for the fallback of its park, since the workers'
    // wake-ups let in held runs only beyond those asking (docs/capacity.md, "Before the first claim").
    const first = !parsed.data.parkedFor;
    const claimWithinMs = first ? (deps.capacity.waitMs ?? DEFAULT_CAPACITY_WAIT_MS) : 0;
    const delayMs = await parkAgainFor(deps.capacity, {
      ...ask.parkedFor,
      waitedMs,
      claimWithinMs,
    });
    if (delayMs === undefined) return undefined;
    const runId = parsed.data.runId;
    const pastDeadline = await deps
      .parkedAgain?.(runId, {
        for: 'capacity',
        model: ask.parkedFor.model,
        until: new Date(now + delayMs).toISOString(),
      })
      .catch((error: unknown) => {
        logger.debug({ err: error, runId }, 'could not record a park again before the claim');
        return false;
      });
    if (pastDeadline) {
      // Claimed, the run is ended at its deadline (the pickup's own check): it leaves the line first.
      await deps.capacity.limiter
        .leave(ask.parkedFor.model, ask.parkedFor.waiter.id)
        .catch(() => {});
      return undefined;
    }
    // A first pickup's park: its wait for the permit begins now, and its next pickup asks again.
    return !first
      ? { delayMs }
      : { delayMs, marks: { waitingSince: now, parkedFor: ask.parkedFor } };
  }

  /**
   * What a pickup asks the limiter before its claim: a job back from a park, its park's model and
   * waiter; a run's first pickup (a `run` job's first attempt), its entity's model with the run as
   * waiter. Undefined: nothing to ask (the pickup claims).
   */
  function askOf(
    job: Job,
    parsed: Exclude<CatalogJob, { name: 'expire' }>,
  ): { parkedFor: ParkedFor; waitingSince?: number } | undefined {
    const { parkedAttempt, parkedFor, waitingSince } = parsed.data;
    if (parkedFor && parkedAttempt !== undefined && job.attemptsStarted === parkedAttempt + 1) {
      return { parkedFor, ...(waitingSince !== undefined && { waitingSince }) };
    }
    if (parsed.name !== 'run' || job.attemptsStarted !== 1 || parkedAttempt !== undefined) return;
    const { entity, runId, tenant, priority } = parsed.data;
    const model = entity && deps.modelOf?.(entity);
    // A job without its run's place in line (an older producer's) claims as before.
    if (!model || priority === undefined) return undefined;
    return { parkedFor: { model, waiter: { id: runId, tenant: tenant ?? '', priority } } };
  }

  /**
   * Delays a job back from a park (or a run's first) again, unclaimed: the run is untouched (still
   * RUNNING parked at its checkpoint, or PENDING), and the mark moves to this pickup so the next one
   * claims with reason `capacity` (a never-claimed run's with reason `run`).
   */
  async function parkAgain(
    job: Job,
    token: string | undefined,
    { delayMs, marks }: ParkAgain,
  ): Promise<never> {
    await deps.runs.parkAgain({ job, token }, delayMs, marks);
    logger.debug(
      { runId: (job.data as { runId?: string }).runId, jobId: job.id, delayMs },
      'run still waits for model capacity: parked again before its claim',
    );
    throw new DelayedError();
  }

  async function handBack(job: Job, token: string | undefined, claimed: boolean): Promise<never> {
    await deps.runs.handBack({ job, token }, claimed);
    logger.info(
      { runId: (job.data as { runId?: string }).runId, jobId: job.id, claimed },
      'job handed back for another worker',
    );
    throw new WaitingError();
  }
}
