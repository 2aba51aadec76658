import type { RedisConnection } from '@cairn/runtime';
import type { ClockBook } from './clock-book.js';

// BullMQ's prioritized set scores a job priority * 2^32 + a counter.
const READ = `
local first = redis.call('ZRANGE', KEYS[3], 0, 0, 'WITHSCORES')[2]
return { redis.call('HGET', KEYS[1], ARGV[1]), redis.call('GET', KEYS[2]), first or false }`;

const SWAP = `
if (redis.call('HGET', KEYS[1], ARGV[1]) or '') ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
local last = tonumber(redis.call('GET', KEYS[2]) or '-1')
if tonumber(ARGV[4]) > last then redis.call('SET', KEYS[2], ARGV[4]) end
return 1`;

const CLEAR = `
if (redis.call('GET', KEYS[2]) or '') == ARGV[1] then redis.call('DEL', KEYS[1], KEYS[2]) end
return 1`;

/**
 * The clocks of a queue on its Redis: a hash of tenants' clocks and the
 * largest slot given, under the queue's prefix `queueKey` (BullMQ's
 * `<prefix>:<queue>`, so on Redis Cluster they share the queue's hash slot),
 * each move one script (atomic).
 */
export function redisClockBook(redis: RedisConnection, queueKey: string): ClockBook {
  const keys = [`${queueKey}:fair-clocks`, `${queueKey}:fair-last-slot`] as const;
  const run = (script: string, ...args: string[]) => redis.eval(script, 2, ...keys, ...args);
  return {
    read: async (tenant) => {
      const [clock, last, first] = (await redis.eval(
        READ,
        3,
        ...keys,
        `${queueKey}:prioritized`,
        tenant,
      )) as [string | null, string | null, string | null];
      return {
        clock: clock ?? undefined,
        lastSlot: last === null ? undefined : Number(last),
        firstWaitingPriority: first === null ? undefined : Math.floor(Number(first) / 2 ** 32),
      };
    },
    swap: async (tenant, expected, next, slot) =>
      (await run(SWAP, tenant, expected ?? '', next, String(slot))) === 1,
    clear: async (lastSlot) => {
      await run(CLEAR, String(lastSlot));
    },
    close: async () => undefined,
  };
}
