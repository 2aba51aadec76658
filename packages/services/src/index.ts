export { createDatabase, type TestDatabase } from './create-database.js';
export { MissingServiceUrlError, ServiceError, ServiceStartError } from './errors.js';
export { findPostgresBinaries } from './find-postgres-binaries.js';
export { CHROMIUM_VAR, findChromium } from './find-chromium.js';
export { findRedisServer, REDIS_SERVER_VAR } from './find-redis-server.js';
export { freePort } from './free-port.js';
export {
  startPostgres,
  type PostgresService,
  type StartPostgresOptions,
} from './start-postgres.js';
export {
  startRedis,
  type RedisRestartOptions,
  type RedisService,
  type StartRedisOptions,
} from './start-redis.js';
export { startRedisCluster, REDIS_CLI_VAR, type RedisClusterService } from './start-redis-cluster.js';
export { testDatabase } from './test-database.js';
export { TEST_DATABASE_URL_VAR, TEST_REDIS_URL_VAR } from './test-env.js';
export { hasTestRedis, testQueueBackend, testRedisUrl } from './test-redis-url.js';
export {
  REDIS_SERVER,
  CHROMIUM,
  requires,
  requiresChromium,
  requiresBackend,
  requiresRedis,
  type MachineRequirement,
} from './test-requirements.js';
export { spawnApp, REPO_ROOT, type AppProcess, type CairnApp, type SpawnAppOptions } from './spawn-app.js';
export { buildWorkerBundle, type WorkerBundle } from './build-worker-bundle.js';
