import { randomBytes } from 'node:crypto';
import type { TestProject } from 'vitest/node';
import type {} from 'vitest';
import { startPostgres } from './start-postgres.js';
import { startRedis } from './start-redis.js';
import {
  TEST_DATABASE_URL_VAR,
  TEST_REDIS_URL_VAR,
  TEST_APP_BUNDLE_VAR,
  TEST_RUN_ID_VAR,
} from './test-env.js';
import { dropRunTemplates } from './template-database.js';
import { buildTestAppBundle } from './build-test-app-bundle.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Admin URL of the test run's Postgres (same as `CAIRN_TEST_DATABASE_URL`). */
    cairnDatabaseUrl: string;
    /** URL of the test run's Redis, or '' when none (same as `CAIRN_TEST_REDIS_URL`). */
    cairnRedisUrl: string;
  }
}

/**
 * Vitest global setup: starts Postgres and (if a binary exists) Redis once per
 * test run, compiles the worker and the producer once for the processes the tests
 * spawn, publishes their URLs and the compiled apps, and returns the teardown.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const [postgresResult, redisResult, bundleResult] = await Promise.allSettled([
    startPostgres(),
    startRedis(),
    buildTestAppBundle(),
  ]);
  if (postgresResult.status === 'rejected' || redisResult.status === 'rejected') {
    if (postgresResult.status === 'fulfilled') await postgresResult.value.stop();
    if (redisResult.status === 'fulfilled') await redisResult.value?.stop();
    if (bundleResult.status === 'fulfilled') bundleResult.value.remove();
    throw postgresResult.status === 'rejected'
      ? postgresResult.reason
      : (redisResult as PromiseRejectedResult).reason;
  }
  // Apps that do not compile fail their tests from their sources too, with the error where it belongs.
  const bundle = bundleResult.status === 'fulfilled' ? bundleResult.value : undefined;
  if (bundle) process.env[TEST_APP_BUNDLE_VAR] = JSON.stringify(bundle.bundle);
  else
    console.warn(
      `apps start from their sources: they did not compile (${String(bundleResult.status === 'rejected' ? bundleResult.reason : '')})`,
    );
  const postgres = postgresResult.value;
  const redis = redisResult.value;
  process.env[TEST_DATABASE_URL_VAR] = postgres.url;
  // Names this run's template databases (testDatabaseFromTemplate), apart from a run beside it on the same server.
  const runId = randomBytes(4).toString('hex');
  process.env[TEST_RUN_ID_VAR] = runId;
  if (redis) process.env[TEST_REDIS_URL_VAR] = redis.url;
  else delete process.env[TEST_REDIS_URL_VAR];
  project.provide('cairnDatabaseUrl', postgres.url);
  project.provide('cairnRedisUrl', redis?.url ?? '');
  return async () => {
    await dropRunTemplates(postgres.url, runId).catch((error: unknown) =>
      console.warn(`template databases of test run ${runId} not dropped: ${String(error)}`),
    );
    await Promise.all([postgres.stop(), redis?.stop()]);
    bundle?.remove();
  };
}
