/**
 * `@cairn/queue`: the run queue on BullMQ, carrying out the lifecycle's job
 * intents, the run worker and its executors, and the reconciler.
 * What the apps run on beside it (configuration, live channel, metrics,
 * traces) is `@cairn/runtime`; the producer's facade is `@cairn/producer`'s
 * `ProducerService`.
 */
export { carryOutIntents, jobPortOf } from './carry-out-intents.js';
export { JOB_CATALOG, DEFAULT_JOB_OPTIONS, type JobName, type JobData, type CatalogJob } from './job-catalog.js';
export { RunQueue, LIVE_JOB_STATES, type RunQueueOptions } from './queue-backend.js';
export type { AnyQueue, AnyWorker } from './backend-handle.js';
export { startRunWorker, type RunWorkerOptions, type RunWorkerHandle } from './run-worker.js';
export type { JobResult } from './run-processor.js';
export {
  DEFAULT_RECONCILE_BATCH,
  reconcileOnce,
  startReconciler,
  type ReconcileOptions,
  type ReconcileResult,
  type ReconcilerHandle,
} from './reconciler.js';
export { QueueError, InvalidJobError } from './errors.js';
