import { limitFor, type ModelCapacity, type ModelLimit } from '@cairn/engine';
import { SILENT_LOGGER, type WorkerLogger } from '@cairn/runtime';
import type { RunQueue } from './queue-backend.js';

/** How often a worker looks for room to wake parked runs into, in ms. */
const DEFAULT_WAKE_EVERY_MS = 100;

/** What {@link startCapacityLine} needs. */
export interface CapacityLineOptions {
  /** The fleet's limiter, where parked runs wait in their models' lines. */
  limiter: ModelCapacity;
  /** The models' configured limits (`CAIRN_MODEL_LIMITS` over the registry's), as the runs ask with them. */
  limits: readonly ModelLimit[];
  runQueue: RunQueue;
  /** @defaultValue 100 */
  everyMs?: number;
  logger?: WorkerLogger;
}

/** A running {@link startCapacityLine}. */
export interface CapacityLineHandle {
  stop(): Promise<void>;
}

/**
 * Wakes the runs that wait parked in a model's line (README and docs/operations.md, "Model
 * capacity"): every `everyMs`, for each model with waiters, asks the limiter which held waiters
 * the room free now lets in (a permit released, the window moving on, a pause over, a dead
 * holder's lease ended: `ModelCapacity.wake`, in fair order) and promotes their delayed jobs, so a
 * run comes back when a permit can be had rather than when its park's delay ends (that delay
 * stays as the fallback for a wake-up lost). Errors are logged, never thrown.
 */
export function startCapacityLine(options: CapacityLineOptions): CapacityLineHandle {
  const { limiter, limits, runQueue } = options;
  const logger = options.logger ?? SILENT_LOGGER;
  let current: Promise<unknown> = Promise.resolve();
  let running = false;
  const wakeAll = async () => {
    for (const { model, waiting } of await limiter.snapshot()) {
      if (waiting === 0) continue;
      for (const runId of await limiter.wake(model, limitFor(limits, model))) {
        const live = await runQueue.liveJobFor(runId);
        // Back already (or gone): it asks in its place, or its run moved on.
        if (live?.state === 'delayed') await live.job.promote().catch(() => undefined);
      }
    }
  };
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    current = wakeAll()
      .catch((error: unknown) => logger.warn({ err: error }, 'capacity line: a wake failed'))
      .finally(() => (running = false));
  }, options.everyMs ?? DEFAULT_WAKE_EVERY_MS);
  timer.unref();
  return {
    stop: async () => {
      clearInterval(timer);
      await current;
    },
  };
}
