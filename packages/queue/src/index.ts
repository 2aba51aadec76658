/**
 * `@cairn/queue`: the run queue on BullMQ, the client that creates and
 * enqueues runs, the run worker and its executors, the reconciler and the
 * environment configuration.
 */
export { CairnClient, type CairnClientConfig, type CairnClientDeps, type ContinueRunOptions } from './cairn-client.js';
export { JOB_CATALOG, DEFAULT_JOB_OPTIONS, type JobName, type JobData, type CatalogJob } from './job-catalog.js';
export { RunQueue, DEFAULT_QUEUE_NAME, LIVE_JOB_STATES, type RunQueueOptions } from './queue-backend.js';
export type { QueueBackendKind, AnyQueue, AnyWorker } from './backend-handle.js';
export { startRunWorker, type RunWorkerOptions, type RunWorkerHandle } from './run-worker.js';
export { DEFAULT_LOCK_MS, DEFAULT_STALLED_INTERVAL_MS } from './lock-defaults.js';
export type { JobResult } from './run-processor.js';
export type { RunExecutor, RunExecution } from './execution/run-executor.js';
export type { RunJobRequest, RunJobOutcome } from './execution/run-job.js';
export { createInlineExecutor, type InlineExecutorOptions } from './execution/inline-executor.js';
export { createThreadExecutor, type ThreadExecutorOptions } from './execution/thread-executor.js';
export type { ExecutionThreadConfig } from './execution/thread-protocol.js';
export {
  DEFAULT_RECONCILE_BATCH,
  reconcileOnce,
  startReconciler,
  type ReconcileOptions,
  type ReconcileResult,
  type ReconcilerHandle,
} from './reconciler.js';
export {
  applyRetention,
  RETENTION_INTERVAL_MS,
  startRetention,
  type RetentionHandle,
  type RetentionOptions,
} from './retention-pass.js';
export { openStoreDb, type OpenStoreDbOptions, type StoreDb } from './open-store-db.js';
export { CAIRN_ENV_VARIABLES, MIN_SESSION_SECRET_CHARS, parseEnvConfig, resolveEnvConfig, type CairnEnvConfig } from './env-config.js';
export { parseKeyRing, RESERVED_TENANT_NAMES, type KeyAccess, type KeyRingEntry, type KeyRingVariable } from './key-ring-entries.js';
export {
  modelFromSpec,
  loadRegistry,
  loadRegistryModule,
  type LoadedRegistryModule,
  type ModelSpecOptions,
} from './load-registry.js';
export { SILENT_LOGGER, type WorkerLogger } from './worker-logger.js';
export {
  QueueError,
  InvalidJobError,
  ConfigError,
  ServiceUnreachableError,
  RunWaitTimeoutError,
} from './errors.js';
export {
  liveChannel,
  parseLiveEvent,
  SILENT_PUBLISHER,
  type LiveEvent,
  type LivePublisher,
  type LiveSubscriber,
} from './live/live-event.js';
export {
  createRedisConnection,
  queuePrefixFor,
  redisUrlsOf,
  DEFAULT_CLUSTER_QUEUE_PREFIX,
  type RedisConnection,
  type RedisTarget,
} from './redis-connection.js';
export { createLivePublisher, createLiveSubscriber, type LiveChannelOptions } from './live/create-live.js';
export { RedisLivePublisher, RedisLiveSubscriber } from './live/redis-live.js';
export { PostgresLivePublisher, PostgresLiveSubscriber } from './live/postgres-live.js';
export { CairnMetrics } from './metrics/cairn-metrics.js';
export { PrometheusMetrics } from './metrics/prometheus-metrics.js';
export { registerStateGauges, type CountedQueue, type MetricSources } from './metrics/state-gauges.js';
export { startMetricsServer, type MetricsServer } from './metrics/metrics-server.js';
export { RunEventObserver, type RunObservation, type RunObserver } from './metrics/run-observation.js';
export { startTracing, type Tracing, type TracingOptions } from './tracing/tracing-setup.js';
export { RunTracer, type RunTracerOptions, type PreviousAttempt } from './tracing/run-tracer.js';
export { currentTraceMetadata, contextFromMetadata } from './tracing/trace-context.js';
