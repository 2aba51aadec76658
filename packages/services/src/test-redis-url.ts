import { MissingServiceUrlError } from './errors.js';
import { TEST_REDIS_URL_VAR } from './test-env.js';

/** URL of the test run's Redis (`CAIRN_TEST_REDIS_URL`); throws MissingServiceUrlError when no Redis was started. */
export function testRedisUrl(): string {
  const url = process.env[TEST_REDIS_URL_VAR];
  if (!url) throw new MissingServiceUrlError(TEST_REDIS_URL_VAR);
  return url;
}
