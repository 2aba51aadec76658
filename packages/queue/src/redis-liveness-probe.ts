import type { Redis } from 'ioredis';
import type { AnyWorker } from './backend-handle.js';
import { LIVENESS_NAME_PREFIX, WATCHER_TERM_MS, type LivenessProbe } from './worker-liveness.js';

/** Lists the worker again (a worker taken off by mistake comes back), then takes or keeps the watcher's term. */
const HOLD_WATCH = `
if ARGV[4] == '1' then redis.call('HSET', KEYS[2], ARGV[1], ARGV[3]) end
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) or redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0`;

const GIVE_UP_WATCH = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0`;

/** Deletes a job's lock only while its token is the dead worker's (`<id>:<n>`). */
const RELEASE_LOCK = `
local token = redis.call('GET', KEYS[1])
if token and string.sub(token, 1, string.len(ARGV[1])) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0`;

/**
 * The liveness probe on (non-cluster) Redis: the worker's named connection,
 * the queue's `cairn:workers` hash of the workers that announced themselves
 * (again at each look, so one taken off by mistake comes back),
 * `CLIENT LIST` for the open connections, a `SET NX PX` term for the watcher.
 * `connect(name)` opens a connection that ioredis names at every (re)connect.
 */
export async function openRedisLivenessProbe(
  worker: AnyWorker,
  connect: (connectionName?: string) => Redis,
): Promise<LivenessProbe> {
  const registry = worker.toKey('cairn:workers');
  const watcherKey = worker.toKey('cairn:liveness-watcher');
  const own = connect(`${LIVENESS_NAME_PREFIX}${worker.id}`);
  await own.ping();
  const redis = connect();
  // Listed only once its connection is open: a listed worker is never missing for want of one.
  await redis.hset(registry, worker.id, String(Date.now()));
  return {
    holdWatch: async () =>
      (await redis.eval(
        HOLD_WATCH,
        2,
        watcherKey,
        registry,
        worker.id,
        WATCHER_TERM_MS,
        String(Date.now()),
        // Listed again only while its named connection is up: listed means seen when alive.
        own.status === 'ready' ? '1' : '0',
      )) === 1,
    census: async () => ({
      listed: await redis.hkeys(registry),
      connected: connectedWorkerIds(String(await redis.call('CLIENT', 'LIST', 'TYPE', 'normal'))),
    }),
    releaseLocks: async (deadWorkerId) => {
      const released: string[] = [];
      for (const jobId of await redis.lrange(worker.keys.active!, 0, -1)) {
        const lock = `${worker.toKey(jobId)}:lock`;
        if ((await redis.eval(RELEASE_LOCK, 1, lock, `${deadWorkerId}:`)) === 1)
          released.push(jobId);
      }
      return released;
    },
    forget: async (deadWorkerId) => void (await redis.hdel(registry, deadWorkerId)),
    clearStalledThrottle: async () => void (await redis.del(worker.keys['stalled-check']!)),
    close: async () => {
      await redis.hdel(registry, worker.id).catch(() => undefined);
      await redis.eval(GIVE_UP_WATCH, 1, watcherKey, worker.id).catch(() => undefined);
      redis.disconnect();
      own.disconnect();
    },
  };
}

/** The BullMQ worker ids of the liveness connections in a `CLIENT LIST` reply. */
function connectedWorkerIds(clientList: string): Set<string> {
  const ids = new Set<string>();
  for (const match of clientList.matchAll(/\bname=cairn-live:(\S+)/g)) ids.add(match[1]!);
  return ids;
}
