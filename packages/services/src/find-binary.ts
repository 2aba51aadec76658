import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/**
 * Path of the binary `name`: the path in environment variable `envVar` when
 * it is set (nothing else is searched; a path that does not exist means "not
 * on this machine"), else the first on PATH, else `fallback`; undefined when
 * there is none.
 */
export function findBinary(name: string, envVar: string, fallback: string): string | undefined {
  const explicit = process.env[envVar];
  if (explicit !== undefined) return existsSync(explicit) ? explicit : undefined;
  const candidates = (process.env.PATH ?? '')
    .split(delimiter)
    .filter(Boolean)
    .map((dir) => join(dir, name));
  return [...candidates, fallback].find((path) => existsSync(path));
}
