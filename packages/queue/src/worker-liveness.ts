import type { AnyWorker, WorkerHooks } from './backend-handle.js';

/** How often the fleet's watcher looks for workers whose process died. */
export const LIVENESS_POLL_MS = 50;

/** The watcher's term: a worker that is not the watcher tries to take it this often, and takes it this long after the watcher dies. */
export const WATCHER_TERM_MS = 200;

/** How long a listed worker's connection must be missing for it to count as dead: longer than a reconnect after a blip. */
const MISSING_MS = 150;

/**
 * The fixed delay between a liveness connection's reconnect attempts: after
 * an outage every worker's connection comes back within it of the server,
 * well inside {@link SETTLE_MS} (a growing backoff would let one come back
 * seconds after the watcher's, and be taken for dead).
 */
export const LIVENESS_RECONNECT_MS = 50;

/** How long a watcher whose own look failed (its connection gone, a census error) looks again before it acts: the others may still be reconnecting. */
const SETTLE_MS = 400;

/** Pause between the two stalled checks run after a death, for the first one to finish. */
const STALLED_RECHECK_MS = 50;

/** The prefix of the name a worker's liveness connection carries, before its BullMQ id. */
export const LIVENESS_NAME_PREFIX = 'cairn-live:';

/** What a queue backend tells the liveness watch, on that backend's own terms. */
export interface LivenessProbe {
  /** Takes or keeps the fleet's single watcher term: true while this worker is the watcher. */
  holdWatch(): Promise<boolean>;
  /**
   * The workers listed as holding a liveness connection whose connection is
   * not open now, and whether this worker's own is seen open.
   */
  census(): Promise<{ missing: ReadonlySet<string>; ownSeen: boolean }>;
  /** Releases the locks of the dead worker's active jobs (only those its tokens still hold); returns their ids. */
  releaseLocks(deadWorkerId: string): Promise<string[]>;
  /** Takes a dead worker off the list. */
  forget(deadWorkerId: string): Promise<void>;
  /** Lifts BullMQ's stalled-check throttle, so that the next check runs at once. */
  clearStalledThrottle(): Promise<void>;
  /** Takes this worker off the list, gives up the watcher term and closes the probe's connections. */
  close(): Promise<void>;
}

/** A started liveness watch; `stop()` ends it and withdraws the worker. */
export interface LivenessWatch {
  stop(): Promise<void>;
}

/**
 * A faster signal of a worker's death than its lock's expiry. Each worker
 * holds a connection of its own named `cairn-live:<BullMQ worker id>` and is
 * listed once it is open: the kernel closes it the moment the process dies
 * (SIGKILL included), and a blocked execution thread cannot close it. One
 * worker of the fleet at a time (the probe's watcher term) looks every
 * {@link LIVENESS_POLL_MS}; a listed worker whose connection has been missing
 * for {@link MISSING_MS} is dead: the locks of its active jobs (BullMQ tokens
 * `<its id>:<n>`) are released and BullMQ's stalled check is run at once,
 * twice (a check moves a job without a lock once a check has marked it), so
 * its runs resume on the other workers instead of after their locks expire.
 * A job whose lock is held is never moved; a worker never listed (its probe
 * failed, or it predates the signal) is left to its lock's expiry.
 *
 * The watcher never acts while it cannot see its own connection, and after
 * its own look failed (a blip, a server restart) it looks for
 * {@link SETTLE_MS} before it acts, so a fleet-wide reconnect is no death
 * (liveness connections reconnect every {@link LIVENESS_RECONNECT_MS}); it
 * looks once more right before it releases a worker's locks. The lock stays
 * the fence: a live worker wrongly taken for dead
 * loses its lock at its next renewal, as on any takeover, and its execution
 * stops at its next checkpoint without writing.
 */
export function watchWorkerLiveness(
  worker: AnyWorker,
  probe: LivenessProbe,
  options: {
    pollMs?: number;
    onReleased?: (jobIds: readonly string[], deadWorkerId: string) => void;
    onCensusFailed?: (error: unknown) => void;
  } = {},
): LivenessWatch {
  const pollMs = options.pollMs ?? LIVENESS_POLL_MS;
  /** When each listed worker was first seen missing (ms). */
  const missingSince = new Map<string, number>();
  /** Until when the watcher only looks (undefined: in trouble now; 0: settled). */
  let settledAt: number | undefined = 0;
  let nextTermTry = 0;
  let watching = false;
  let censusFailed = false;
  let stopped = false;
  let polling: Promise<void> | undefined;

  const checkStalledNow = async (): Promise<void> => {
    for (let i = 0; i < 2; i++) {
      await probe.clearStalledThrottle();
      await worker.startStalledCheckTimer();
      await new Promise((resolve) => setTimeout(resolve, STALLED_RECHECK_MS));
    }
  };

  const poll = async (): Promise<void> => {
    const now = Date.now();
    // A worker that is not the watcher asks for the term twice a term, not at every poll.
    if (!watching && now < nextTermTry) return;
    watching = await probe.holdWatch();
    if (!watching) {
      nextTermTry = now + WATCHER_TERM_MS / 2;
      missingSince.clear();
      return;
    }
    const { missing, ownSeen } = await probe.census();
    if (!ownSeen) {
      // Its own connection unseen: what it sees is not the fleet (a reconnect, a proxy).
      settledAt = undefined;
      missingSince.clear();
      return;
    }
    settledAt ??= now + SETTLE_MS;
    for (const id of missingSince.keys()) if (!missing.has(id)) missingSince.delete(id);
    for (const id of missing) {
      const since = missingSince.get(id) ?? now;
      missingSince.set(id, since);
      if (now < settledAt || now - since < MISSING_MS) continue;
      missingSince.delete(id);
      // A last look before acting: a slow poll must not release a worker that came back meanwhile.
      const again = await probe.census();
      if (!again.missing.has(id) || !again.ownSeen) continue;
      const released = await probe.releaseLocks(id);
      await probe.forget(id);
      if (released.length > 0) {
        await checkStalledNow();
        options.onReleased?.(released, id);
      }
    }
  };
  const timer = setInterval(() => {
    // One poll at a time: a slow one is not followed by a burst that would shorten MISSING_MS.
    if (stopped || polling) return;
    polling = poll()
      .then(
        () => void (censusFailed = false),
        (error: unknown) => {
          if (!censusFailed) options.onCensusFailed?.(error);
          censusFailed = true;
          settledAt = undefined;
          missingSince.clear();
        },
      )
      .finally(() => (polling = undefined));
  }, pollMs);
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
 * Opens the probe and watches with it until the worker has closed (its jobs
 * finished or handed back: a closing worker's runs are not taken from it); an
 * error opening it reaches the worker's `error` listeners (the worker then
 * runs on lock expiry alone, unlisted). `started` runs once the probe is open
 * or failed (a worker created with `autorun: false` starts taking jobs there).
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
      onCensusFailed: (error) => worker.emit('error', asError(error)),
    }),
  );
  worker.once('closed', () => void watch.then((w) => w.stop()).catch(() => undefined));
  watch.then(started, (error: unknown) => {
    worker.emit('error', asError(error));
    started();
  });
}

/** Anything thrown, as an Error for a worker's `error` listeners. */
export function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
