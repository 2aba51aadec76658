/**
 * `@cairn/runtime`: what Cairn's worker and producer run on, beside the queue:
 * the environment configuration, registry loading, the store's database at
 * start, the Redis connection, the live channel, the retention pass,
 * Prometheus metrics, OpenTelemetry traces, and the executors that run a
 * pickup through the engine (in this thread or in execution threads).
 *
 * @example
 * ```ts
 * import { parseEnvConfig } from '@cairn/runtime';
 * const config = parseEnvConfig(process.env); // throws ConfigError naming the first bad variable
 * ```
 */
export {
  CAIRN_ENV_VARIABLES,
  DEFAULT_REGISTRY_MODULE,
  parseEnvConfig,
  resolveEnvConfig,
  type CairnEnvConfig,
} from './env-config.js';
export { parseKeyRing, type KeyAccess } from './key-ring-entries.js';
export { DEFAULT_QUEUE_NAME, type QueueBackendKind } from './queue-backend-kind.js';
export { queueConnectionOf } from './queue-connection.js';
export { DEFAULT_LOCK_MS, DEFAULT_STALLED_INTERVAL_MS, leaseCheckMsFor } from './lock-defaults.js';
export { loadRegistry, loadRegistryModule, modelFromSpec } from './load-registry.js';
export { openStoreDb } from './open-store-db.js';
export { startRetention } from './retention-pass.js';
export { startSearchChunks } from './search-chunks-pass.js';
export { startPeriodicPass, type PeriodicPass } from './periodic-pass.js';
export { SILENT_LOGGER, type WorkerLogger } from './worker-logger.js';
export { ConfigError, ServiceUnreachableError } from './errors.js';
export {
  createRedisConnection,
  DEFAULT_CLUSTER_QUEUE_PREFIX,
  queuePrefixFor,
  type RedisConnection,
} from './redis-connection.js';
export { RedisModelCapacity } from './capacity/redis-model-capacity.js';
export type { LiveEvent, LiveSubscriber } from './live/live-event.js';
export { createLiveSubscriber } from './live/create-live.js';
export { CairnMetrics, type WebhookAttemptObservation } from './metrics/cairn-metrics.js';
export { PrometheusMetrics } from './metrics/prometheus-metrics.js';
export { registerStateGauges, type MetricSources } from './metrics/state-gauges.js';
export { startMetricsServer, type MetricsServer } from './metrics/metrics-server.js';
export { startTracing } from './tracing/tracing-setup.js';
export { currentTraceMetadata } from './tracing/trace-context.js';
export type { RunExecutor } from './execution/run-executor.js';
export type { RunJobRequest, RunJobOutcome } from './execution/run-job.js';
export { createInlineExecutor, type InlineExecutorOptions } from './execution/inline-executor.js';
export {
  createConfiguredExecutor,
  type ExecutorSettings,
} from './execution/configured-executor.js';
export { createThreadExecutor } from './execution/thread-executor.js';
export { openModelCapacity, type OpenModelCapacity } from './capacity/open-model-capacity.js';
export { capacitySettingsOf } from './capacity/capacity-settings.js';
export { webhookBackoffMs, type WebhookSettings } from './webhooks/webhook-settings.js';
export {
  isPrivateAddress,
  PrivateAddressError,
  publicOnlyLookup,
  webhookUrlProblem,
} from './webhooks/webhook-target.js';
