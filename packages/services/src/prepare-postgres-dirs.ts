import { chmod, chown, mkdir, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { PostgresDirs } from './postgres-launcher.js';
import type { PostgresUserIds } from './run-as-postgres.js';

/** Creates a fresh temp run dir and the data dir (the caller's, or `<runDir>/data`), owned by `owner` when given. */
export async function preparePostgresDirs(
  dataDir: string | undefined,
  owner: PostgresUserIds | undefined,
): Promise<PostgresDirs> {
  const runDir = await mkdtemp(join(tmpdir(), 'cairn-pg-'));
  const dirs = { runDir, dataDir: dataDir ? resolve(dataDir) : join(runDir, 'data') };
  await mkdir(dirs.dataDir, { recursive: true, mode: 0o700 });
  await chmod(dirs.dataDir, 0o700);
  if (owner) {
    await chown(runDir, owner.uid, owner.gid);
    await chown(dirs.dataDir, owner.uid, owner.gid);
  }
  return dirs;
}
