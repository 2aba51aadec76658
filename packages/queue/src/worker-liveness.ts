import type { Redis } from 'ioredis';
import type { AnyWorker } from './backend-handle.js';

/** How often the fleet's watcher looks for workers whose process died. */
export const LIVENESS_POLL_MS = 50;

/** The watcher's term, renewed at each poll: another worker takes over this long after the watcher dies. */
const WATCHER_TERM_POLLS = 4;

/** Polls in a row a worker must be missing from Redis's client list to count as dead (a reconnect is not a death). */
const MISSING_POLLS = 2;

const CLIENT_NAME_PREFIX = 'cairn-live:';

/** Pause between the two stalled checks run after a death, for the first one to finish. */
const STALLED_RECHECK_MS = 20;

/** Takes or keeps the watcher's term: 1 when this worker is the fleet's watcher. */
const HOLD_WATCH = `
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) or redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0`;

/** Ends the watcher's term if this worker holds it (a graceful stop hands it over at once). */
const GIVE_UP_WATCH = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0`;

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Deletes a job's lock when the lock's token is one of the dead worker's
 * (BullMQ tokens are `<worker id>:<n>`): a lock renewed or taken by anyone
 * else since is left alone.
 */
const RELEASE_LOCK = `
local token = redis.call('GET', KEYS[1])
if token and string.sub(token, 1, string.len(ARGV[1])) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0`;

/** A started liveness watch; `stop()` ends it and withdraws the worker. */
export interface LivenessWatch {
  stop(): Promise<void>;
}

/**
 * A faster signal of a worker's death than its lock's expiry, for one BullMQ
 * worker on (non-cluster) Redis:
 * - the worker opens a connection of its own named `cairn-live:<BullMQ worker
 *   id>` and lists its id in the queue's `cairn:workers` hash; the kernel
 *   closes that connection the moment the process dies (SIGKILL included),
 *   and a blocked execution thread cannot close it;
 * - one worker of the fleet at a time (a term renewed at each poll) reads
 *   `CLIENT LIST` every {@link LIVENESS_POLL_MS}: a listed worker
 *   whose connection is gone for {@link MISSING_POLLS} polls in a row is
 *   dead, and the locks of its active jobs (tokens `<its id>:<n>`) are
 *   deleted and BullMQ's stalled check is run at once, which moves them back
 *   to wait for the other workers instead of after the lock expires.
 * The lock stays the fence: a live worker wrongly taken for dead (its
 * connection dropped) loses its lock at its next renewal, as on any
 * takeover, and its execution stops at its next checkpoint without writing.
 */
export async function watchWorkerLiveness(
  worker: AnyWorker,
  connect: (connectionName?: string) => Redis,
  options: {
    pollMs?: number;
    onReleased?: (jobIds: readonly string[], deadWorkerId: string) => void;
  } = {},
): Promise<LivenessWatch> {
  const registry = worker.toKey('cairn:workers');
  const watcherKey = worker.toKey('cairn:liveness-watcher');
  const pollMs = options.pollMs ?? LIVENESS_POLL_MS;
  // Named at every (re)connect by ioredis: a reconnect after a blip is seen again within a poll.
  const own = connect(`${CLIENT_NAME_PREFIX}${worker.id}`);
  await own.ping();
  const watcher = connect();
  await watcher.hset(registry, worker.id, String(Date.now()));
  const missing = new Map<string, number>();
  let stopped = false;
  let polling: Promise<void> = Promise.resolve();

  const poll = async (): Promise<void> => {
    // One watcher for the fleet, so `CLIENT LIST` is read once a poll whatever the number of workers.
    if (
      (await watcher.eval(HOLD_WATCH, 1, watcherKey, worker.id, pollMs * WATCHER_TERM_POLLS)) !== 1
    ) {
      missing.clear();
      return;
    }
    const listed = await watcher.hkeys(registry);
    const connected = connectedWorkerIds(
      String(await watcher.call('CLIENT', 'LIST', 'TYPE', 'normal')),
    );
    for (const id of listed) {
      if (connected.has(id)) {
        missing.delete(id);
        continue;
      }
      const polls = (missing.get(id) ?? 0) + 1;
      missing.set(id, polls);
      if (polls < MISSING_POLLS) continue;
      missing.delete(id);
      const released: string[] = [];
      for (const jobId of await watcher.lrange(worker.keys.active!, 0, -1)) {
        const lock = `${worker.toKey(jobId)}:lock`;
        if ((await watcher.eval(RELEASE_LOCK, 1, lock, `${id}:`)) === 1) released.push(jobId);
      }
      await watcher.hdel(registry, id);
      if (released.length > 0) {
        await checkStalledNow();
        options.onReleased?.(released, id);
      }
    }
  };
  // BullMQ's stalled check moves a job without a lock once a check has marked it: two checks now,
  // each past the check throttle, move it whether or not the last regular one marked it (a job
  // whose lock is held is never moved).
  const checkStalledNow = async (): Promise<void> => {
    for (let i = 0; i < 2; i++) {
      await watcher.del(worker.keys['stalled-check']!);
      await worker.startStalledCheckTimer();
      await delay(STALLED_RECHECK_MS);
    }
  };
  const timer = setInterval(() => {
    polling = polling.then(() => (stopped ? undefined : poll())).catch(() => undefined);
  }, pollMs);
  timer.unref();

  return {
    stop: async () => {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      await polling;
      await watcher.hdel(registry, worker.id).catch(() => undefined);
      await watcher.eval(GIVE_UP_WATCH, 1, watcherKey, worker.id).catch(() => undefined);
      watcher.disconnect();
      own.disconnect();
    },
  };
}

/** The BullMQ worker ids of the `cairn-live:` connections in a `CLIENT LIST` reply. */
function connectedWorkerIds(clientList: string): Set<string> {
  const ids = new Set<string>();
  for (const match of clientList.matchAll(/\bname=cairn-live:(\S+)/g)) ids.add(match[1]!);
  return ids;
}
