import { type Engine, type RunStatus } from '@cairn/engine';
import {
  expireAndResume,
  pauseIntents,
  type JobIntent,
  type Pickup,
  type PickupOutcome,
} from '@cairn/engine/lifecycle';
import type { DecisionStore, ExpiryOutcome } from '@cairn/engine/store';
import type { WorkerLogger } from '@cairn/runtime';
import type { CatalogJob } from '../job-catalog.js';

/** One pickup of a catalog job, as an executor receives it (plain data: it may cross a thread). */
export interface RunJobRequest {
  job: CatalogJob;
  /** BullMQ's `attemptsStarted` for this pickup (1 on the first). */
  attemptsStarted: number;
  /** The BullMQ job id, for logs. */
  jobId?: string;
  /** The trace context the job carried (BullMQ's `telemetry.metadata`). */
  trace?: string;
}

/**
 * How a pickup ended (shown in Bull Board as the job's return value where it
 * completes the job): the engine's {@link PickupOutcome}, or an expiry's;
 * `intents`: what the lifecycle asks of the queue after it (a pause's
 * delayed `expire` jobs, the resume an expiry decided).
 */
export type RunJobOutcome =
  | Exclude<PickupOutcome, { kind: 'finished' }>
  | { kind: 'finished'; status: RunStatus; intents?: JobIntent[] }
  | { kind: 'expired'; result: ExpiryOutcome['kind']; intents: JobIntent[] };

/** What {@link runJob} needs. */
export interface RunJobDeps {
  engine: Engine;
  store: Pick<DecisionStore, 'expireAction' | 'listPendingActions'>;
  logger: WorkerLogger;
}

/** Translates a BullMQ run or continue job into the engine's pickup: the job's name and data, and BullMQ's attempt count. */
export function pickupOf(job: Exclude<CatalogJob, { name: 'expire' }>, attemptsStarted: number): Pickup {
  const { runId, handoverAttempt } = job.data;
  const handedOver = handoverAttempt === undefined ? {} : { handoverAttempt };
  if (job.name === 'run') return { job: 'run', runId, attemptsStarted, ...handedOver };
  return { job: 'continue', runId, reason: job.data.reason, attemptsStarted, ...handedOver };
}

/**
 * Executes one pickup: ONE engine call, which holds every lifecycle rule
 * (skip, cancel at claim, entity, claim, lease watch, execution); this only
 * logs how it ended. An `expire` job is the lifecycle's expiry of its
 * pending action. The intents of either are for the processor to carry out.
 */
export async function runJob(deps: RunJobDeps, request: RunJobRequest, handover: AbortSignal): Promise<RunJobOutcome> {
  const { engine, store, logger } = deps;
  const { job } = request;
  if (job.name === 'expire') {
    const { outcome, intents } = await expireAndResume(store, job.data.actionId);
    logger.info({ runId: job.data.runId, actionId: job.data.actionId, result: outcome.kind }, 'pending action expiry');
    return { kind: 'expired', result: outcome.kind, intents };
  }
  const pickup = pickupOf(job, request.attemptsStarted);
  logger.info({ runId: pickup.runId, jobId: request.jobId, attemptsStarted: pickup.attemptsStarted }, 'picked up a run');
  const outcome = await engine.processPickup(pickup, { handover });
  if (outcome.kind === 'lease-lost') {
    logger.warn({ runId: pickup.runId, jobId: request.jobId }, 'lease lost: another execution holds the run; stopping without writing');
  } else if (outcome.kind === 'finished') {
    logger.info({ runId: pickup.runId, jobId: request.jobId, status: outcome.status }, 'run finished');
  } else {
    logger.info({ runId: pickup.runId, jobId: request.jobId, outcome }, 'pickup done');
  }
  if (outcome.kind === 'finished' && outcome.status === 'PAUSED') {
    return { ...outcome, intents: await pauseIntents(store, pickup.runId) };
  }
  return outcome;
}
