import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/** Path of a `redis-server` binary on PATH or at /usr/bin/redis-server; undefined when there is none. */
export function findRedisServer(): string | undefined {
  const candidates = (process.env.PATH ?? '')
    .split(delimiter)
    .filter(Boolean)
    .map((dir) => join(dir, 'redis-server'));
  return [...candidates, '/usr/bin/redis-server'].find((path) => existsSync(path));
}
