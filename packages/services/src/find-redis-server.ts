import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/** Environment variable naming the `redis-server` binary to use; when set, nothing else is searched (a path that does not exist means "no Redis on this machine"). */
export const REDIS_SERVER_VAR = 'CAIRN_REDIS_SERVER';

/** Path of a `redis-server` binary: `CAIRN_REDIS_SERVER` when set, else on PATH or at /usr/bin/redis-server; undefined when there is none. */
export function findRedisServer(): string | undefined {
  const explicit = process.env[REDIS_SERVER_VAR];
  if (explicit !== undefined) return existsSync(explicit) ? explicit : undefined;
  const candidates = (process.env.PATH ?? '')
    .split(delimiter)
    .filter(Boolean)
    .map((dir) => join(dir, 'redis-server'));
  return [...candidates, '/usr/bin/redis-server'].find((path) => existsSync(path));
}
