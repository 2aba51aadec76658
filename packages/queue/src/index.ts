/**
 * `@cairn/queue`: the run queue on BullMQ, carrying out the lifecycle's job
 * intents, the run worker (given its executor by `@cairn/runtime`) and the
 * reconciler.
 * What the apps run on beside it (configuration, live channel, metrics,
 * traces) is `@cairn/runtime`; the producer's facade is `@cairn/producer`'s
 * `ProducerService`.
 */
export { startCapacityLine } from './capacity-line.js';
export { DEFAULT_JOB_OPTIONS } from './job-catalog.js';
export { RunQueue, type RunQueueOptions } from './queue-backend.js';
export { RunEngine } from './run-engine.js';
export { openRedisLivenessProbe } from './redis-liveness-probe.js';
export { startRunWorker } from './run-worker.js';
export { reconcileOnce, startReconciler } from './reconciler.js';
export { startWebhookDelivery } from './webhooks/start-webhook-delivery.js';
export { firingTimeOf, ScheduleQueue, type FiringJobData } from './schedule-queue.js';
export { MIN_SCHEDULE_EVERY_MS, nextFireTimes, timingProblem } from './schedule-timing.js';
export type { QueueConnectionOptions } from './open-backend.js';
