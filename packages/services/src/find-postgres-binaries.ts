import { existsSync, readdirSync, realpathSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';

const DEBIAN_ROOT = '/usr/lib/postgresql';

function hasServerBinaries(binDir: string): boolean {
  return existsSync(join(binDir, 'initdb')) && existsSync(join(binDir, 'pg_ctl'));
}

function debianBinDirs(): string[] {
  if (!existsSync(DEBIAN_ROOT)) return [];
  return readdirSync(DEBIAN_ROOT)
    .filter((version) => /^\d+(\.\d+)?$/.test(version))
    .sort((a, b) => Number.parseFloat(b) - Number.parseFloat(a))
    .map((version) => join(DEBIAN_ROOT, version, 'bin'));
}

function pathBinDirs(): string[] {
  return (process.env.PATH ?? '')
    .split(delimiter)
    .filter((dir) => dir && existsSync(join(dir, 'pg_ctl')))
    .map((dir) => dirname(realpathSync(join(dir, 'pg_ctl'))));
}

/** The directory holding the machine's Postgres server binaries (`initdb`, `pg_ctl`): newest `/usr/lib/postgresql/<v>/bin` first, then `pg_ctl` on PATH; undefined when there are none. */
export function findPostgresBinaries(): string | undefined {
  return [...debianBinDirs(), ...pathBinDirs()].find(hasServerBinaries);
}
