import {
  Engine,
  type CapacitySettings,
  type Model,
  type ModelPrices,
  type OnAttemptsExhausted,
  type Registry,
  type TenantBudgets,
} from '@cairn/engine';
import type { StoreWrites } from '@cairn/store';
import { SILENT_PUBLISHER, type LivePublisher } from '../live/live-event.js';
import { RunEventObserver, type RunObserver } from '../metrics/run-observation.js';
import { timeCommits } from '../metrics/timed-commits.js';
import { RunTracer } from '../tracing/run-tracer.js';
import type { Tracing } from '../tracing/tracing-setup.js';
import { SILENT_LOGGER, type WorkerLogger } from '../worker-logger.js';
import type { RunExecutor } from './run-executor.js';
import { runJob } from './run-job.js';

/** Options of {@link createInlineExecutor}. */
export interface InlineExecutorOptions {
  /** The store's writes part: what executions claim, commit and finish runs on. */
  store: StoreWrites;
  registry: Registry;
  /** Shown in every attempt this executor claims. */
  workerId: string;
  /** Replaces every entity's model. */
  model?: Model;
  /** The app's context every tool receives as `ctx.context`. */
  context?: unknown;
  /** How often an execution re-reads its run row (epoch, cancel). @defaultValue 1000 */
  leaseCheckMs?: number;
  /** `CAIRN_MAX_ATTEMPTS`. @defaultValue the engine's DEFAULT_MAX_ATTEMPTS */
  maxAttempts?: number;
  /** `CAIRN_ON_ATTEMPTS_EXHAUSTED`. @defaultValue 'error' */
  onAttemptsExhausted?: OnAttemptsExhausted;
  /** `CAIRN_VERSION_GRACE_MS`. @defaultValue the engine's DEFAULT_VERSION_GRACE_MS */
  versionGraceMs?: number;
  logger?: WorkerLogger;
  /** Where run events are published live as they happen. @defaultValue {@link SILENT_PUBLISHER} */
  live?: LivePublisher;
  /** Receives the measurements of the runs' work (the worker's metrics). */
  observe?: RunObserver;
  /** Traces the runs (`startTracing`); without it no span is made. */
  tracing?: Tracing;
  /** Fleet-wide permits for model requests; absent: requests go straight out. */
  capacity?: CapacitySettings;
  /** Prices by model: each response's cost is kept with the run's usage. */
  prices?: ModelPrices;
  /** USD each tenant may spend per UTC day (`CAIRN_TENANT_BUDGETS`): its runs pause once it is spent. */
  tenantBudgets?: TenantBudgets;
  /** Called by `close()` (e.g. to destroy the store's pool). */
  onClose?: () => Promise<void>;
}

/** Executes runs in the calling thread, with one engine publishing run events live. */
export function createInlineExecutor(options: InlineExecutorOptions): RunExecutor {
  const logger = options.logger ?? SILENT_LOGGER;
  const live = options.live ?? SILENT_PUBLISHER;
  const observe = options.observe ?? (() => undefined);
  const observer = new RunEventObserver(observe);
  const tracer =
    options.tracing &&
    new RunTracer({
      tracer: options.tracing.tracer,
      ids: options.tracing.ids,
      workerId: options.workerId,
      previousAttempt: async (runId, epoch) => {
        // Only the attempts are wanted: not the run's messages.
        const view = await options.store.getRunView(runId, { messages: false });
        const attempt = view?.attempts.find((a) => a.epoch === epoch);
        return (
          attempt && {
            workerId: attempt.worker_id,
            startedAt: new Date(attempt.started_at),
            endedAt: attempt.ended_at ? new Date(attempt.ended_at) : null,
          }
        );
      },
      onError: (error) => logger.debug({ err: error }, 'could not trace an abandoned attempt'),
    });
  const engine = new Engine({
    store: timeCommits(options.store, ({ runId, startTime, endTime }) => {
      observe({ kind: 'checkpoint-commit', seconds: (endTime - startTime) / 1000 });
      tracer?.commit(runId, startTime, endTime);
    }),
    registry: options.registry,
    workerId: options.workerId,
    model: options.model,
    context: options.context,
    maxAttempts: options.maxAttempts,
    onAttemptsExhausted: options.onAttemptsExhausted,
    versionGraceMs: options.versionGraceMs,
    leaseCheckMs: options.leaseCheckMs ?? 1000,
    capacity: options.capacity,
    prices: options.prices,
    tenantBudgets: options.tenantBudgets,
    onLeaseCheckError: (error) => logger.warn({ err: error }, 'lease check failed'),
    onEvent: (event) => {
      live.publish(event);
      observer.sink(event);
      tracer?.sink(event);
    },
    onContent: options.tracing?.captureContent ? tracer?.content : undefined,
  });
  const handovers = new Set<AbortController>();
  let handingOver = false;
  const deps = { engine, store: options.store, logger };
  return {
    execute: (request) => {
      const handover = new AbortController();
      if (handingOver) handover.abort();
      handovers.add(handover);
      const { runId } = request.work;
      tracer?.begin(runId, request.trace);
      const outcome = runJob(deps, request, handover.signal)
        .then((result) => {
          if (result.kind === 'lease-lost') observe({ kind: 'lease-lost' });
          if (result.kind !== 'finished') {
            observer.forget(runId);
            tracer?.stop(runId, result.kind);
          }
          return result;
        })
        .finally(() => handovers.delete(handover));
      return { outcome };
    },
    handoverAll: () => {
      handingOver = true;
      for (const handover of handovers) handover.abort();
    },
    close: async () => {
      await live.close();
      await options.tracing?.shutdown();
      await options.onClose?.();
    },
  };
}
