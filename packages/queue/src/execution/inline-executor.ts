import { Engine, type Model, type Registry } from '@cairn/engine';
import type { PostgresCheckpointStore } from '@cairn/store';
import { SILENT_PUBLISHER, type LivePublisher } from '../live/live-event.js';
import { RunEventObserver, type RunObserver } from '../metrics/run-observation.js';
import { timeCommits } from '../metrics/timed-commits.js';
import { SILENT_LOGGER, type WorkerLogger } from '../worker-logger.js';
import type { RunExecutor } from './run-executor.js';
import { runJob } from './run-job.js';

/** Options of {@link createInlineExecutor}. */
export interface InlineExecutorOptions {
  store: PostgresCheckpointStore;
  registry: Registry;
  /** Shown in every attempt this executor claims. */
  workerId: string;
  /** Replaces every entity's model. */
  model?: Model;
  /** The app's context every tool receives as `ctx.context`. */
  context?: unknown;
  /** How often an execution re-reads its run row (epoch, cancel). @defaultValue 1000 */
  leaseCheckMs?: number;
  logger?: WorkerLogger;
  /** Where run events are published live as they happen. @defaultValue {@link SILENT_PUBLISHER} */
  live?: LivePublisher;
  /** Receives the measurements of the runs' work (the worker's metrics). */
  observe?: RunObserver;
  /** Called by `close()` (e.g. to destroy the store's pool). */
  onClose?: () => Promise<void>;
}

/** Executes runs in the calling thread, with one engine publishing run events live. */
export function createInlineExecutor(options: InlineExecutorOptions): RunExecutor {
  const logger = options.logger ?? SILENT_LOGGER;
  const live = options.live ?? SILENT_PUBLISHER;
  const observe = options.observe ?? (() => undefined);
  const observer = new RunEventObserver(observe);
  const engine = new Engine({
    store: timeCommits(options.store, observe),
    registry: options.registry,
    workerId: options.workerId,
    model: options.model,
    context: options.context,
    onEvent: (event) => {
      live.publish(event);
      observer.sink(event);
    },
  });
  const handovers = new Set<AbortController>();
  let handingOver = false;
  const deps = { engine, store: options.store, logger, leaseCheckMs: options.leaseCheckMs ?? 1000 };
  return {
    execute: (request) => {
      const handover = new AbortController();
      if (handingOver) handover.abort();
      handovers.add(handover);
      const outcome = runJob(deps, request, handover.signal)
        .then((result) => {
          if (result.kind === 'lease-lost') observe({ kind: 'lease-lost' });
          if (result.kind !== 'finished') observer.forget(request.job.data.runId);
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
      await options.onClose?.();
    },
  };
}
