import { findBinary } from './find-binary.js';

/** Environment variable naming the `redis-server` binary to use; when set, nothing else is searched (a path that does not exist means "no Redis on this machine"). */
export const REDIS_SERVER_VAR = 'CAIRN_REDIS_SERVER';

/** Path of a `redis-server` binary: `CAIRN_REDIS_SERVER` when set, else on PATH or at /usr/bin/redis-server; undefined when there is none. */
export function findRedisServer(): string | undefined {
  return findBinary('redis-server', REDIS_SERVER_VAR, '/usr/bin/redis-server');
}
