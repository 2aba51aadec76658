import { limitFor, type ModelCapacity, type ModelLimit } from '@cairn/engine';
import {
  SILENT_LOGGER,
  startPeriodicPass,
  type PeriodicPass,
  type WorkerLogger,
} from '@cairn/runtime';
import type { RunQueue } from './queue-backend.js';
import { RunEngine } from './run-engine.js';

/** How often a worker looks for room to wake parked runs into, in ms. */
const DEFAULT_WAKE_EVERY_MS = 100;

/** How many parents up a woken member run's tree job is looked for. */
const MAX_TREE_DEPTH = 8;

/** What {@link startCapacityLine} needs. */
export interface CapacityLineOptions {
  /** The fleet's limiter, where parked runs wait in their models' lines. */
  limiter: ModelCapacity;
  /** The models' configured limits (`CAIRN_MODEL_LIMITS` over the registry's), as the runs ask with them. */
  limits: readonly ModelLimit[];
  runQueue: RunQueue;
  /**
   * A run's parent (a member run's team), to find the job of a member run's tree: its root's.
   * Without it, a member run that parks is not woken and comes back by its park's delay.
   */
  parentOf?: (runId: string) => Promise<string | null | undefined>;
  /** @defaultValue 100 */
  everyMs?: number;
  logger?: WorkerLogger;
}

/**
 * Wakes the runs that wait parked in a model's line (docs/capacity.md and docs/operations.md, "Model
 * capacity"): every `everyMs`, for each model with waiters, asks the limiter which held waiters
 * the room free now lets in (a permit released, the window moving on, a pause over, a dead
 * holder's lease ended: `ModelCapacity.wake`, in fair order) and wakes them (`RunEngine.wake`:
 * their tree's delayed job promoted), so a run comes back when a permit can be had rather than
 * when its park's delay ends (that delay stays as the fallback for a wake-up lost). Errors are
 * logged, never thrown.
 */
export function startCapacityLine(options: CapacityLineOptions): PeriodicPass {
  const { limiter, limits, runQueue } = options;
  const logger = options.logger ?? SILENT_LOGGER;
  const runs = new RunEngine({ runQueue });
  const wakeAll = async () => {
    for (const { model, waiting } of await limiter.snapshot()) {
      if (waiting === 0) continue;
      for (const runId of await limiter.wake(model, limitFor(limits, model))) {
        await runs.wake(await treeJobOf(runId));
      }
    }
  };
  /** The job that holds the run's tree: the run's own, or (a member run) its root's. */
  const treeJobOf = async (runId: string) => {
    let id: string | null | undefined = runId;
    for (let depth = 0; id; depth++) {
      const live = await runQueue.liveJobFor(id);
      if (live || !options.parentOf || depth >= MAX_TREE_DEPTH) return live;
      id = await options.parentOf(id);
    }
    return undefined;
  };
  return startPeriodicPass(wakeAll, {
    everyMs: options.everyMs ?? DEFAULT_WAKE_EVERY_MS,
    onError: (error) => logger.warn({ err: error }, 'capacity line: a wake failed'),
  });
}
