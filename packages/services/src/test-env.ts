/** Environment variable through which the vitest global setup hands the test Postgres admin URL to test workers. */
export const TEST_DATABASE_URL_VAR = 'CAIRN_TEST_DATABASE_URL';

/** Environment variable through which the vitest global setup hands the test Redis URL to test workers (unset when no Redis). */
export const TEST_REDIS_URL_VAR = 'CAIRN_TEST_REDIS_URL';

/** Environment variable through which the vitest global setup hands the test run's compiled apps to test workers (unset: apps start from their sources). */
export const TEST_APP_BUNDLE_VAR = 'CAIRN_TEST_APP_BUNDLE';

/** Environment variable through which the vitest global setup names the test run, so that its template databases are its own (dropped at its end). */
export const TEST_RUN_ID_VAR = 'CAIRN_TEST_RUN_ID';
