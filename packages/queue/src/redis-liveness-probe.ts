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
 * The liveness probe on (non-cluster) Redis. The worker's liveness
 * connection (named `cairn-live:<id>`, for an operator's `CLIENT LIST`)
 * subscribes to the queue's `cairn:live` channel and to one of its own,
 * `cairn:live:<id>`; the server drops both subscriptions the moment the
 * connection closes. The queue's `cairn:live-workers` hash lists the workers
 * that announced themselves (again at each look, so one taken off by mistake
 * comes back), and a `SET NX PX` key is the watcher's term.
 *
 * A look costs the same whatever the fleet's size while nobody is missing:
 * `HLEN` of the list against `PUBSUB NUMSUB` of the shared channel, both
 * O(1). Only when they differ (a death, a reconnect, a worker starting or
 * closing) does it read the list and each listed worker's own channel,
 * O(workers). (`CLIENT LIST`, which the signal read at each look before,
 * formats every connection of the server: 100 workers' cost 10 times 3's,
 * docs/benchmarks.md.) The keys are not the ones of that earlier version,
 * whose workers are not subscribed: its watcher and this one each watch
 * their own workers during a rolling deploy.
 * `connect(name)` opens a connection that ioredis names at every (re)connect.
 */
export async function openRedisLivenessProbe(
  worker: AnyWorker,
  connect: (connectionName?: string) => Redis,
): Promise<LivenessProbe> {
  const registry = worker.toKey('cairn:live-workers');
  const watcherKey = worker.toKey('cairn:live-watcher');
  const everyone = worker.toKey('cairn:live');
  const channelOf = (workerId: string) => worker.toKey(`cairn:live:${workerId}`);
  const own = connect(`${LIVENESS_NAME_PREFIX}${worker.id}`);
  // Subscribed again by ioredis at each reconnect.
  await own.subscribe(everyone, channelOf(worker.id));
  const redis = connect();
  /** Subscribers of each channel (a dead worker's connection has none). */
  const subscribers = async (channels: readonly string[]) => {
    const reply = (await redis.call('PUBSUB', 'NUMSUB', ...channels)) as (string | number)[];
    return channels.map((_, i) => Number(reply[2 * i + 1]));
  };
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
    census: async () => {
      const [listedCount, [connectedCount, mine]] = await Promise.all([
        redis.hlen(registry),
        subscribers([everyone, channelOf(worker.id)]),
      ]);
      const ownSeen = mine! > 0;
      // As many connections as listed workers: nobody is missing.
      if (connectedCount === listedCount) return { missing: new Set(), ownSeen };
      const listed = await redis.hkeys(registry);
      const counts = await subscribers(listed.map(channelOf));
      return { missing: new Set(listed.filter((_, i) => counts[i] === 0)), ownSeen };
    },
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
