import type { OnAttemptsExhausted, TenantBudgets } from '@cairn/engine';
import { createLivePublisher } from '../live/create-live.js';
import type { QueueBackendKind } from '../queue-backend-kind.js';
import { startTracing } from '../tracing/tracing-setup.js';
import { createInlineExecutor, type InlineExecutorOptions } from './inline-executor.js';
import type { RunExecutor } from './run-executor.js';

/**
 * The settings an executor is configured with, as plain values: what a
 * worker reads from its environment, and what it hands an execution thread
 * (`ExecutionThreadConfig` extends it).
 */
export interface ExecutorSettings {
  databaseUrl: string;
  workerId: string;
  leaseCheckMs: number;
  /** `CAIRN_MAX_ATTEMPTS`. */
  maxAttempts: number;
  /** `CAIRN_ON_ATTEMPTS_EXHAUSTED`. @defaultValue 'error' */
  onAttemptsExhausted?: OnAttemptsExhausted;
  /** `CAIRN_VERSION_GRACE_MS`. */
  versionGraceMs: number;
  /** `CAIRN_TENANT_BUDGETS`, as parsed. */
  tenantBudgets: TenantBudgets;
  /** The queue backend, whose live channel run events are published on. */
  backend: QueueBackendKind;
  redisUrl?: string;
  /** `CAIRN_REDIS_CLUSTER`. */
  redisCluster?: boolean;
  /** `OTEL_EXPORTER_OTLP_ENDPOINT`: runs are traced and exported there. */
  otlpEndpoint?: string;
  /** `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`: spans carry message content. */
  captureMessageContent?: boolean;
}

/** What {@link createConfiguredExecutor} takes besides the settings: the parts already opened. */
export type ExecutorParts = Omit<
  InlineExecutorOptions,
  keyof ExecutorSettings | 'live' | 'tracing' | 'logger'
> &
  Required<Pick<InlineExecutorOptions, 'logger'>>;

/**
 * An executor of runs in the calling thread, set up from a worker's settings:
 * its live publisher on the queue backend's channel, its tracing when an OTLP
 * endpoint is set. The one place a worker's main thread (`executionThreads: 0`)
 * and an execution thread build theirs.
 */
export async function createConfiguredExecutor(
  settings: ExecutorSettings,
  parts: ExecutorParts,
): Promise<RunExecutor> {
  const { logger } = parts;
  return createInlineExecutor({
    ...parts,
    workerId: settings.workerId,
    leaseCheckMs: settings.leaseCheckMs,
    maxAttempts: settings.maxAttempts,
    onAttemptsExhausted: settings.onAttemptsExhausted,
    versionGraceMs: settings.versionGraceMs,
    tenantBudgets: settings.tenantBudgets,
    ...(settings.otlpEndpoint && {
      tracing: await startTracing({
        endpoint: settings.otlpEndpoint,
        serviceName: 'cairn-worker',
        captureContent: settings.captureMessageContent ?? false,
      }),
    }),
    live: createLivePublisher({
      backend: settings.backend,
      redisUrl: settings.redisUrl,
      redisCluster: settings.redisCluster,
      databaseUrl: settings.databaseUrl,
      onError: (error) => logger.debug({ err: error }, 'could not publish a live event'),
    }),
  });
}
