import type { AnyWorker, WorkerHooks } from './backend-handle.js';

/** How often the fleet's watcher looks for workers whose process died. */
export const LIVENESS_POLL_MS = 50;

/** Polls in a row a worker must be missing to count as dead (a reconnect is not a death). */
const MISSING_POLLS = 2;

/** Pause between the two stalled checks run after a death, for the first one to finish. */
const STALLED_RECHECK_MS = 20;

/** The prefix of the name a worker's liveness connection carries, before its BullMQ id. */
export const LIVENESS_NAME_PREFIX = 'cairn-live:';

/** What a queue backend tells the liveness watch, on that backend's own terms. */
export interface LivenessProbe {
  /** Takes or keeps the fleet's single watcher term: true while this worker is the watcher. */
  holdWatch(): Promise<boolean>;
  /** The workers that may hold jobs, and those whose liveness connection is open now. */
  census(): Promise<{ candidates: Iterable<string>; connected: ReadonlySet<string> }>;
  /** Releases the locks of the dead worker's active jobs (only those its tokens still hold); returns their ids. */
  releaseLocks(deadWorkerId: string): Promise<string[]>;
  /** Forgets a dead worker. */
  forget(deadWorkerId: string): Promise<void>;
  /** Lifts BullMQ's stalled-check throttle, so that the next check runs at once. */
  clearStalledThrottle(): Promise<void>;
  /** Withdraws this worker, gives up the watcher term and closes the probe's connections. */
  close(): Promise<void>;
}

/** A started liveness watch; `stop()` ends it and withdraws the worker. */
export interface LivenessWatch {
  stop(): Promise<void>;
}

/**
 * A faster signal of a worker's death than its lock's expiry. Each worker
 * holds a connection of its own named `cairn-live:<BullMQ worker id>`: the
 * kernel closes it the moment the process dies (SIGKILL included), and a
 * blocked execution thread cannot close it. One worker of the fleet at a time
 * (the probe's watcher term) looks every {@link LIVENESS_POLL_MS}: a worker
 * whose connection is gone for {@link MISSING_POLLS} polls in a row is dead,
 * the locks of its active jobs (BullMQ tokens `<its id>:<n>`) are released
 * and BullMQ's stalled check is run at once, twice (a check moves a job
 * without a lock once a check has marked it), so its runs resume on the
 * other workers instead of after their locks expire. A job whose lock is held
 * is never moved.
 *
 * The lock stays the fence: a live worker wrongly taken for dead (its
 * connection dropped) loses its lock at its next renewal, as on any
 * takeover, and its execution stops at its next checkpoint without writing.
 */
export function watchWorkerLiveness(
  worker: AnyWorker,
  probe: LivenessProbe,
  options: {
    pollMs?: number;
    onReleased?: (jobIds: readonly string[], deadWorkerId: string) => void;
  } = {},
): LivenessWatch {
  const missing = new Map<string, number>();
  let stopped = false;
  let polling: Promise<void> = Promise.resolve();

  const checkStalledNow = async (): Promise<void> => {
    for (let i = 0; i < 2; i++) {
      await probe.clearStalledThrottle();
      await worker.startStalledCheckTimer();
      await new Promise((resolve) => setTimeout(resolve, STALLED_RECHECK_MS));
    }
  };

  const poll = async (): Promise<void> => {
    if (!(await probe.holdWatch())) {
      missing.clear();
      return;
    }
    const { candidates, connected } = await probe.census();
    for (const id of candidates) {
      if (connected.has(id)) {
        missing.delete(id);
        continue;
      }
      const polls = (missing.get(id) ?? 0) + 1;
      missing.set(id, polls);
      if (polls < MISSING_POLLS) continue;
      missing.delete(id);
      const released = await probe.releaseLocks(id);
      await probe.forget(id);
      if (released.length > 0) {
        await checkStalledNow();
        options.onReleased?.(released, id);
      }
    }
  };
  const timer = setInterval(() => {
    polling = polling.then(() => (stopped ? undefined : poll())).catch(() => undefined);
  }, options.pollMs ?? LIVENESS_POLL_MS);
  timer.unref();

  return {
    stop: async () => {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      await polling;
      await probe.close().catch(() => undefined);
    },
  };
}

/**
 * Opens the probe and watches with it until the worker starts closing; an
 * error opening it reaches the worker's `error` listeners (the worker then
 * runs on lock expiry alone). `started` runs once the probe is open or failed
 * (a worker created with `autorun: false` starts taking jobs there).
 */
export function startLivenessWatch(
  worker: AnyWorker,
  openProbe: () => Promise<LivenessProbe>,
  hooks: WorkerHooks,
  started: () => void = () => undefined,
): void {
  const watch = openProbe().then((probe) =>
    watchWorkerLiveness(worker, probe, {
      ...(hooks.onDeadWorker && { onReleased: hooks.onDeadWorker }),
    }),
  );
  worker.once('closing', () => void watch.then((w) => w.stop()).catch(() => undefined));
  watch.then(started, (error: unknown) => {
    worker.emit('error', error instanceof Error ? error : new Error(String(error)));
    started();
  });
}
