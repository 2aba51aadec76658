export { createDatabase, type TestDatabase } from './create-database.js';
export { findChromium } from './find-chromium.js';
export { findRedisServer } from './find-redis-server.js';
export { freePort } from './free-port.js';
export { startPostgres, type PostgresService } from './start-postgres.js';
export { startRedis, type RedisService } from './start-redis.js';
export { startRedisCluster, type RedisClusterService } from './start-redis-cluster.js';
export { testDatabase } from './test-database.js';
export { testDatabaseFromTemplate } from './template-database.js';
export { TEST_DATABASE_URL_VAR, TEST_REDIS_URL_VAR } from './test-env.js';
export { hasTestRedis, testQueueBackend, testRedisUrl } from './test-redis-url.js';
export {
  REDIS_SERVER,
  requires,
  requiresChromium,
  requiresBackend,
  requiresRedis,
} from './test-requirements.js';
export { LOG_WAIT_MS, spawnApp, type AppProcess, type SpawnAppOptions } from './spawn-app.js';
export type { CairnApp } from './cairn-app.js';
export { REPO_ROOT } from './repo-root.js';
export { buildAppBundle, buildWorkerBundle, type WorkerBundle } from './build-worker-bundle.js';
