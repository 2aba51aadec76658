import type { CheckpointStore } from '../checkpoint-store.js';
import { CancelRequestedError, LeaseLostError, SuspendRequestedError } from '../errors.js';
import type { SuspendSwitch } from '../suspension.js';

/** Options of {@link watchLease}. */
export interface LeaseWatchOptions {
  store: CheckpointStore;
  runId: string;
  /** How often the run row is read. */
  intervalMs: number;
  /** Aborted with `LeaseLostError` when the epoch moves on, with {@link CancelRequestedError} on a cancel request. */
  controller: AbortController;
  /** Told the run's suspend request (its tree's executions stop at their boundaries; with `now`, the controller is aborted with {@link SuspendRequestedError}). */
  suspend?: SuspendSwitch;
  /** A read failed (the watch keeps going). */
  onError?: (error: unknown) => void;
}

/** A running lease watch. */
export interface LeaseWatch {
  /** The epoch this execution claimed, once known (from the execution's `onClaim`). */
  setEpoch(epoch: number): void;
  /** Told the run's deadline at every read while the epoch holds: a continue may move it while the run executes. */
  followDeadline(listener: (deadlineAt: Date | null) => void): void;
  /** Reads the row now (also done every `intervalMs`). */
  check(): Promise<void>;
  stop(): void;
}

/**
 * Polls the run's row while an execution holds it, because a queue may tell
 * a worker it lost its job only when it finishes: a moved epoch (another
 * worker claimed the run, or a forced cancel) aborts with `LeaseLostError`,
 * a cancel request aborts with {@link CancelRequestedError}, a suspend request goes to the
 * tree's {@link SuspendSwitch} (and with `now` aborts with {@link SuspendRequestedError}); the deadline
 * read goes to the execution's deadline (moved by a continue's `deadline_ms`).
 */
export function watchLease(options: LeaseWatchOptions): LeaseWatch {
  const { store, runId, controller } = options;
  let epoch: number | undefined;
  let onDeadline: ((deadlineAt: Date | null) => void) | undefined;
  let running = false;
  const check = async () => {
    if (controller.signal.aborted || running) return;
    running = true;
    try {
      const lease = await store.readLease(runId);
      if (!lease || controller.signal.aborted) return;
      if (epoch !== undefined && lease.epoch !== epoch)
        controller.abort(new LeaseLostError(runId, epoch));
      else if (lease.cancelRequestedAt) controller.abort(new CancelRequestedError(runId));
      else if (epoch !== undefined) {
        onDeadline?.(lease.deadlineAt);
        const suspend = lease.suspendRequest;
        if (suspend) {
          options.suspend?.set(suspend);
          if (suspend.now) controller.abort(new SuspendRequestedError(runId, suspend.runId));
        }
      }
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
    followDeadline: (listener) => {
      onDeadline = listener;
    },
    check,
    stop: () => clearInterval(timer),
  };
}
