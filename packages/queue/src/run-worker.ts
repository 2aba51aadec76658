import type { CapacitySettings, Model, Registry } from '@cairn/engine';
import {
  createInlineExecutor,
  DEFAULT_LOCK_MS,
  DEFAULT_STALLED_INTERVAL_MS,
  leaseCheckMsFor,
  SILENT_LOGGER,
  type InlineExecutorOptions,
  type RunExecutor,
  type WorkerLogger,
} from '@cairn/runtime';
import type { AnyWorker } from './backend-handle.js';
import type { RunQueue } from './queue-backend.js';
import { RunEngine } from './run-engine.js';
import { createRunProcessor, type RunProcessorDeps } from './run-processor.js';

/** Options of {@link startRunWorker}. */
export interface RunWorkerOptions {
  runQueue: RunQueue;
  /** Shown in every attempt this worker claims. */
  workerId: string;
  /**
   * Where runs execute. The worker app uses execution threads
   * (`createThreadExecutor`); without one, runs execute in this thread on
   * `store` and `registry`.
   */
  executor?: RunExecutor;
  /** For the default inline executor: the store's writes part. */
  store?: InlineExecutorOptions['store'];
  /** For the default inline executor. */
  registry?: Registry;
  /** For the default inline executor: replaces every entity's model (`CAIRN_MODEL`). */
  model?: Model;
  /** @defaultValue 10 */
  concurrency?: number;
  /** BullMQ lock duration: a dead worker's run resumes elsewhere after about this long. @defaultValue {@link DEFAULT_LOCK_MS} */
  lockDurationMs?: number;
  /** How often BullMQ looks for stalled jobs. @defaultValue {@link DEFAULT_STALLED_INTERVAL_MS} */
  stalledIntervalMs?: number;
  /** Hold a liveness connection and watch the others' (a dead worker's runs resume before their locks expire). @defaultValue true */
  deathSignal?: boolean;
  /** For the default inline executor: how often an execution re-reads its run row (epoch, cancel). @defaultValue lockDurationMs / 2 */
  leaseCheckMs?: number;
  logger?: WorkerLogger;
  /** The fleet's model capacity, with `CAIRN_CAPACITY_LINE`: a job back from a park, or a run's first, asks it before its claim. */
  capacity?: CapacitySettings;
  /** With `capacity`: the model of an entity this worker serves, asked for before a run's first claim (`RunProcessorDeps.modelOf`). */
  modelOf?: RunProcessorDeps['modelOf'];
  /** With `capacity`: records a park again before the claim (`RunProcessorDeps.parkedAgain`). */
  parkedAgain?: RunProcessorDeps['parkedAgain'];
}

/** A started run worker. */
export interface RunWorkerHandle {
  /** The BullMQ worker. */
  worker: AnyWorker;
  executor: RunExecutor;
  /** Graceful shutdown: running executions stop at their next checkpoint, their jobs go back to the queue, then the worker closes. */
  close(): Promise<void>;
}

/** Crash after crash, a run must never fail with "job stalled more than allowable limit". */
const MAX_STALLED_COUNT = 1_000_000;

/**
 * Starts a BullMQ worker that executes runs with the engine: stalled jobs are
 * resumed as recoveries, lost leases stop without writing, cancel requests
 * abort the execution, and `close()` hands running jobs to other workers.
 *
 * @example
 * const executor = await createThreadExecutor({ config });
 * const handle = startRunWorker({ runQueue, executor, workerId: 'w1' });
 * process.once('SIGTERM', () => void handle.close());
 */
export function startRunWorker(options: RunWorkerOptions): RunWorkerHandle {
  const logger = options.logger ?? SILENT_LOGGER;
  const lockDuration = options.lockDurationMs ?? DEFAULT_LOCK_MS;
  const executor = options.executor ?? inlineExecutor(options, lockDuration, logger);
  let closing = false;
  // The worker's side of the run engine: its executions' moves on the run are their engine's, in their threads.
  const runs = new RunEngine({ runQueue: options.runQueue });
  const processor = createRunProcessor({
    executor,
    logger,
    isClosing: () => closing,
    runs,
    ...(options.capacity && { capacity: options.capacity }),
    ...(options.modelOf && { modelOf: options.modelOf }),
    ...(options.parkedAgain && { parkedAgain: options.parkedAgain }),
  });
  const worker = options.runQueue.createWorker(
    processor,
    {
      name: options.workerId,
      concurrency: options.concurrency ?? 10,
      lockDuration,
      stalledInterval: options.stalledIntervalMs ?? DEFAULT_STALLED_INTERVAL_MS,
      maxStalledCount: MAX_STALLED_COUNT,
    },
    {
      deathSignal: options.deathSignal ?? true,
      onDeadWorker: (jobIds, deadWorkerId) =>
        logger.info(
          { jobIds, deadWorkerId },
          "a worker's connection closed: its jobs go back to the queue without waiting for their locks",
        ),
    },
  );
  worker.on('error', (error) => {
    const lockError = /lock|not in the active state/i.test(error.message);
    if (lockError)
      logger.debug(
        { err: error },
        'BullMQ refused a stale write (lost lock): expected after a takeover',
      );
    else logger.warn({ err: error }, 'BullMQ worker error');
  });
  worker.on('failed', (job, error) => {
    if (error.name !== 'WaitingError') logger.warn({ jobId: job?.id, err: error }, 'job failed');
  });
  worker.on('stalled', (jobId) => logger.info({ jobId }, 'stalled job moved back to wait'));

  let closed: Promise<void> | undefined;
  return {
    worker,
    executor,
    close: () =>
      (closed ??= (async () => {
        closing = true;
        executor.handoverAll();
        await worker.close();
        await executor.close();
      })()),
  };
}

function inlineExecutor(
  options: RunWorkerOptions,
  lockDuration: number,
  logger: WorkerLogger,
): RunExecutor {
  if (!options.store || !options.registry) {
    throw new TypeError('startRunWorker: pass an executor, or a store and a registry');
  }
  return createInlineExecutor({
    store: options.store,
    registry: options.registry,
    workerId: options.workerId,
    model: options.model,
    leaseCheckMs: options.leaseCheckMs ?? leaseCheckMsFor(lockDuration),
    logger,
  });
}
