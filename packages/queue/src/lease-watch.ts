import { CancelRequestedError, LeaseLostError } from '@cairn/engine';
import type { PostgresCheckpointStore } from '@cairn/store';

/** Options of {@link watchLease}. */
export interface LeaseWatchOptions {
  store: PostgresCheckpointStore;
  runId: string;
  /** How often the run row is read. */
  intervalMs: number;
  /** Aborted with `LeaseLostError` when the epoch moves on, with {@link CancelRequestedError} on a cancel request. */
  controller: AbortController;
  /** A read failed (the watch keeps going). */
  onError?: (error: unknown) => void;
}

/** A running lease watch. */
export interface LeaseWatch {
  /** The epoch this execution claimed, once known (from the engine's `onClaim`). */
  setEpoch(epoch: number): void;
  /** Reads the row now (also done every `intervalMs`). */
  check(): Promise<void>;
  stop(): void;
}

/**
 * Polls the run's row while a worker executes it, because BullMQ tells a
 * worker it lost its lock only when it finishes: a moved epoch (another
 * worker claimed the run, or a forced cancel) aborts with `LeaseLostError`,
 * a cancel request aborts with {@link CancelRequestedError}.
 */
export function watchLease(options: LeaseWatchOptions): LeaseWatch {
  const { store, runId, controller } = options;
  let epoch: number | undefined;
  let running = false;
  const check = async () => {
    if (controller.signal.aborted || running) return;
    running = true;
    try {
      const row = await store.db
        .selectFrom('runs')
        .select(['epoch', 'cancel_requested_at'])
        .where('run_id', '=', runId)
        .executeTakeFirst();
      if (!row || controller.signal.aborted) return;
      if (epoch !== undefined && row.epoch !== epoch) controller.abort(new LeaseLostError(runId, epoch));
      else if (row.cancel_requested_at) controller.abort(new CancelRequestedError(runId));
    } catch (error) {
      options.onError?.(error);
    } finally {
      running = false;
    }
  };
  const timer = setInterval(() => void check(), options.intervalMs);
  timer.unref();
  return {
    setEpoch: (value) => {
      epoch ??= value;
    },
    check,
    stop: () => clearInterval(timer),
  };
}
