import type { TestProject } from 'vitest/node';
import type {} from 'vitest';
import { startPostgres } from './start-postgres.js';
import { startRedis } from './start-redis.js';
import { TEST_DATABASE_URL_VAR, TEST_REDIS_URL_VAR } from './test-env.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Admin URL of the test run's Postgres (same as `CAIRN_TEST_DATABASE_URL`). */
    cairnDatabaseUrl: string;
    /** URL of the test run's Redis, or '' when none (same as `CAIRN_TEST_REDIS_URL`). */
    cairnRedisUrl: string;
  }
}

/** Vitest global setup: starts Postgres and (if a binary exists) Redis once per test run, publishes their URLs, and returns the teardown. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const [postgresResult, redisResult] = await Promise.allSettled([startPostgres(), startRedis()]);
  if (postgresResult.status === 'rejected' || redisResult.status === 'rejected') {
    if (postgresResult.status === 'fulfilled') await postgresResult.value.stop();
    if (redisResult.status === 'fulfilled') await redisResult.value?.stop();
    throw postgresResult.status === 'rejected'
      ? postgresResult.reason
      : (redisResult as PromiseRejectedResult).reason;
  }
  const postgres = postgresResult.value;
  const redis = redisResult.value;
  process.env[TEST_DATABASE_URL_VAR] = postgres.url;
  if (redis) process.env[TEST_REDIS_URL_VAR] = redis.url;
  else delete process.env[TEST_REDIS_URL_VAR];
  project.provide('cairnDatabaseUrl', postgres.url);
  project.provide('cairnRedisUrl', redis?.url ?? '');
  return async () => {
    await Promise.all([postgres.stop(), redis?.stop()]);
  };
}
