import type { CheckpointStore } from '../checkpoint-store.js';
import type { EngineResources } from '../engine-resources.js';
import { definitionHashOf } from '../definition-hash.js';
import {
  DeadlineExceededError,
  DefinitionChangedError,
  EntityAwaitingDeployError,
  LeaseLostError,
  RunNotContinuableError,
  RunNotFoundError,
  StoreUnavailableError,
} from '../errors.js';
import type { Entity } from '../registry.js';
import type { RunRecord } from '../run-types.js';
import { attemptReasonFor } from './attempt-reason.js';
import { deadlinePassed } from './deadline.js';
import type { Pickup, PickupOptions, PickupOutcome } from './pickup-types.js';
import { dispositionOfError } from './error-disposition.js';
import { executeRun, registryOf } from './execute-run.js';
import { watchLease } from './lease-watch.js';
import {
  CLAIMABLE_STATUSES,
  RUN_JOB_CLAIMABLE_STATUSES,
  RUN_TRANSITIONS,
  type RunStatus,
} from './run-status.js';
import { endUnrunnableRun } from './unrunnable-run.js';
import { SuspendSwitch } from '../suspension.js';

/**
 * What a pickup of a job does, in order: skip a run that needs no work (gone,
 * finished, paused, or errored under a `run` job), cancel at claim when a
 * cancel was requested, end a run past its deadline in ERROR in one claim
 * without running anything (skip one that ended so already and waits for no
 * continue), resolve the entity BEFORE claiming (unknown, or
 * known with another definition hash than the run's and no upgrade asked
 * for nor `onDefinitionChange: 'resume'`: retried through the version grace
 * period, counted from the first pickup that left the run since it last
 * changed, then ERROR in one claim), then claim (recording the definition it
 * runs on) and execute under a lease watch. Errors come back classified: a
 * lost lease is an outcome, `retry-job` errors are thrown for the queue to retry.
 */
export async function processPickup(
  resources: EngineResources,
  pickup: Pickup,
  options: PickupOptions = {},
): Promise<PickupOutcome> {
  const { store } = resources;
  const registry = registryOf(resources);
  const { runId } = pickup;
  const run = await store.getRun(runId).catch((cause: unknown) => {
    throw new StoreUnavailableError(runId, { cause });
  });
  if (!run) return { kind: 'skipped', status: 'not-found' };
  const claimable = claimableBy(pickup);
  if (!claimable.includes(run.status)) return { kind: 'skipped', status: run.status };
  if (run.cancelRequestedAt) {
    await store.forceCancel(runId, { onlyIfEpoch: run.epoch });
    return { kind: 'cancelled-at-claim' };
  }
  const reason = attemptReasonFor(pickup, run);
  if (run.deadlineAt !== null && deadlinePassed(run, resources.clock.now())) {
    // Ended at its deadline already (a job picked up late, e.g. a dead worker's, unlocked at last): nothing to do.
    if (run.status === 'ERROR' && run.waitingContinueRequestId === null)
      return { kind: 'skipped', status: run.status };
    const error = new DeadlineExceededError(runId, run.deadlineAt);
    return finishedOrLost(() => endUnrunnableRun(resources, runId, reason, error, claimable));
  }
  const { kind, name } = run.entity;
  if (!registry.has(run.entity)) {
    const graceLeftMs = await versionGraceLeftMs(resources, run);
    if (graceLeftMs > 0) throw new EntityAwaitingDeployError(runId, kind, name, graceLeftMs);
    return finishedOrLost(() =>
      endUnrunnableRun(resources, runId, reason, registry.notFoundError(run.entity), claimable),
    );
  }
  const entity = registry.get(run.entity);
  const workerHash = definitionHashOf(entity);
  const runHash = run.definitionHash;
  if (
    runHash !== null &&
    runHash !== workerHash &&
    !(await acceptsDefinitionChange(store, run, entity))
  ) {
    const graceLeftMs = await versionGraceLeftMs(resources, run);
    if (graceLeftMs > 0)
      throw new EntityAwaitingDeployError(runId, kind, name, graceLeftMs, { runHash, workerHash });
    return finishedOrLost(() =>
      endUnrunnableRun(
        resources,
        runId,
        reason,
        new DefinitionChangedError(runId, kind, name, runHash, workerHash),
        claimable,
      ),
    );
  }

  const controller = new AbortController();
  const suspend = new SuspendSwitch();
  const watch = watchLease({
    store,
    runId,
    controller,
    suspend,
    intervalMs: resources.limits.leaseCheckMs,
    onError: (error) => resources.onLeaseCheckError?.(error),
  });
  try {
    const result = await executeRun(resources, runId, {
      reason,
      signal: controller.signal,
      handover: options.handover,
      suspend,
      from: claimable,
      // A run with no hash yet (created before any worker announced one) takes this worker's.
      definition: { hash: workerHash, replaces: runHash },
      capacityWaitedMs: pickup.capacityWaitedMs,
      onClaim: ({ epoch, moveDeadline }) => {
        watch.setEpoch(epoch);
        watch.followDeadline(moveDeadline);
      },
    });
    if (result.outcome === 'handed-over') return { kind: 'handed-over' };
    if (result.outcome === 'parked') return { kind: 'parked', park: result.park };
    return { kind: 'finished', status: result.run.status };
  } catch (error) {
    return outcomeOfError(error);
  } finally {
    watch.stop();
  }
}

/**
 * The statuses a pickup may claim: a `run` job never claims an ERROR run; a
 * `continue` finding the run PAUSED is the resume its last decision enqueued
 * (the claim itself checks that nothing in the tree waits for a person).
 */
function claimableBy(pickup: Pickup): readonly RunStatus[] {
  if (pickup.job === 'run') return RUN_JOB_CLAIMABLE_STATUSES;
  return [...CLAIMABLE_STATUSES, ...RUN_TRANSITIONS.resumeFromPause.from];
}

/**
 * What is left of the version grace period of a run this worker leaves,
 * counted from the first time a worker left it since it last changed (so a
 * run queued or running long before a deploy still gets the whole period,
 * and later pickups never extend it).
 */
async function versionGraceLeftMs(resources: EngineResources, run: RunRecord): Promise<number> {
  const waitedMs = await resources.store.awaitDeploy(run.runId).catch((cause: unknown) => {
    throw new StoreUnavailableError(run.runId, { cause });
  });
  return Math.ceil(resources.limits.versionGraceMs - (waitedMs ?? 0));
}

/**
 * Whether a run started on another definition of `entity` may resume on this
 * one: the entity accepts changes (`onDefinitionChange: 'resume'`), or the
 * continue request waiting on the run asks for it (`upgrade: true`).
 */
async function acceptsDefinitionChange(
  store: CheckpointStore,
  run: RunRecord,
  entity: Entity,
): Promise<boolean> {
  if (entity.onDefinitionChange === 'resume') return true;
  if (run.waitingContinueRequestId === null) return false;
  const request = await store
    .readContinueRequest(run.runId, run.waitingContinueRequestId)
    .catch((cause: unknown) => {
      throw new StoreUnavailableError(run.runId, { cause });
    });
  return request?.upgrade === true;
}

async function finishedOrLost(finish: () => Promise<RunRecord>): Promise<PickupOutcome> {
  try {
    return { kind: 'finished', status: (await finish()).status };
  } catch (error) {
    return outcomeOfError(error);
  }
}

/** A claim that lost a race is a skip; a lost lease an outcome; anything else is thrown, classified. */
function outcomeOfError(error: unknown): PickupOutcome {
  if (error instanceof RunNotContinuableError)
    return { kind: 'skipped', status: error.status as RunStatus };
  if (error instanceof RunNotFoundError) return { kind: 'skipped', status: 'not-found' };
  if (dispositionOfError(error) === 'stop-silently') {
    return {
      kind: 'lease-lost',
      message: error instanceof LeaseLostError ? error.message : String(error),
    };
  }
  throw error;
}
