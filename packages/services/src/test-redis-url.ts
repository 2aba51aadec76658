import { MissingServiceUrlError } from './errors.js';
import { TEST_REDIS_URL_VAR } from './test-env.js';

/** URL of the test run's Redis (`CAIRN_TEST_REDIS_URL`); throws MissingServiceUrlError when no Redis was started. */
export function testRedisUrl(): string {
  const url = process.env[TEST_REDIS_URL_VAR];
  if (!url) throw new MissingServiceUrlError(TEST_REDIS_URL_VAR);
  return url;
}

/** True when the test run has a Redis (the global setup found a `redis-server` or `REDIS_URL`). */
export function hasTestRedis(): boolean {
  return Boolean(process.env[TEST_REDIS_URL_VAR]);
}

/** The queue backend fleet scenarios run on: Redis when the test run has one, else BullMQ's PostgreSQL backend. */
export function testQueueBackend(): 'redis' | 'postgres' {
  return hasTestRedis() ? 'redis' : 'postgres';
}
