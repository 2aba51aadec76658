import { type Engine } from '@cairn/engine';
import {
  expireAndResume,
  pickupIntents,
  type JobIntent,
  type Pickup,
  type PickupOutcome,
} from '@cairn/engine/lifecycle';
import type { DecisionStore, ExpiryOutcome } from '@cairn/engine/store';
import type { WorkerLogger } from '../worker-logger.js';

/** The expiry of a pending action at its deadline; `runId` is its tree's root run. */
export interface Expiry {
  job: 'expire';
  runId: string;
  actionId: string;
}

/**
 * One unit of work, as an executor receives it (plain data: it may cross a
 * thread): the engine's {@link Pickup} of a run, or a pending action's
 * {@link Expiry}. The queue translates its jobs into these.
 */
export interface RunJobRequest {
  work: Pickup | Expiry;
  /** The queue's job id, for logs. */
  jobId?: string;
  /** The trace context the job carried. */
  trace?: string;
}

/**
 * How a pickup ended (shown in Bull Board as the job's return value where it
 * completes the job): the engine's {@link PickupOutcome}, or an expiry's;
 * `intents`: what the lifecycle asks of the queue after it (a pause's
 * delayed `expire` jobs, the resume an expiry decided).
 */
export type RunJobOutcome =
  /** A pickup's outcome, with what it asks of the queue (the lifecycle's `pickupIntents`: a pause's expiries). */
  | (PickupOutcome & { intents?: JobIntent[] })
  | { kind: 'expired'; result: ExpiryOutcome['kind']; intents: JobIntent[] };

/** What {@link runJob} needs. */
export interface RunJobDeps {
  engine: Engine;
  store: Pick<DecisionStore, 'expireAction' | 'listPendingActions'>;
  logger: WorkerLogger;
}

/**
 * Executes one pickup: ONE engine call, which holds every lifecycle rule
 * (skip, cancel at claim, entity, claim, lease watch, execution); this only
 * logs how it ended. An {@link Expiry} is the lifecycle's expiry of its
 * pending action. The intents of either are for the queue to carry out.
 */
export async function runJob(
  deps: RunJobDeps,
  request: RunJobRequest,
  handover: AbortSignal,
): Promise<RunJobOutcome> {
  const { engine, store, logger } = deps;
  const { work } = request;
  if (work.job === 'expire') {
    const { outcome, intents } = await expireAndResume(store, work.actionId);
    logger.info(
      { runId: work.runId, actionId: work.actionId, result: outcome.kind },
      'pending action expiry',
    );
    return { kind: 'expired', result: outcome.kind, intents };
  }
  const pickup = work;
  logger.info(
    { runId: pickup.runId, jobId: request.jobId, attemptsStarted: pickup.attemptsStarted },
    'picked up a run',
  );
  const outcome = await engine.processPickup(pickup, { handover });
  if (outcome.kind === 'lease-lost') {
    logger.warn(
      { runId: pickup.runId, jobId: request.jobId },
      'lease lost: another execution holds the run; stopping without writing',
    );
  } else if (outcome.kind === 'finished') {
    logger.info(
      { runId: pickup.runId, jobId: request.jobId, status: outcome.status },
      'run finished',
    );
  } else {
    logger.info({ runId: pickup.runId, jobId: request.jobId, outcome }, 'pickup done');
  }
  const intents = await pickupIntents(store, pickup.runId, outcome);
  return intents.length > 0 ? { ...outcome, intents } : outcome;
}
