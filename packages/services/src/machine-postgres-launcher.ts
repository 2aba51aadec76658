import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ServiceStartError } from './errors.js';
import {
  INITDB_FLAGS,
  POSTGRES_SETTINGS,
  type PostgresDirs,
  type PostgresLauncher,
} from './postgres-launcher.js';
import { runAsPostgres } from './run-as-postgres.js';

async function readLog(path: string): Promise<string> {
  return readFile(path, 'utf8').catch(() => '');
}

/** A launcher for the machine's Postgres binaries in `binDir`: initdb + pg_ctl, run as the `postgres` user when root. */
export function createMachinePostgresLauncher(
  binDir: string,
  dirs: PostgresDirs,
): PostgresLauncher {
  const pgCtl = join(binDir, 'pg_ctl');
  const logFile = join(dirs.runDir, 'postgres.log');
  return {
    source: 'machine',
    async init() {
      if (existsSync(join(dirs.dataDir, 'PG_VERSION'))) return;
      const result = await runAsPostgres(join(binDir, 'initdb'), [
        '--pgdata',
        dirs.dataDir,
        ...INITDB_FLAGS,
      ]);
      if (result.code !== 0)
        throw new ServiceStartError(
          'postgres',
          `initdb failed (exit ${result.code})`,
          result.output,
        );
    },
    async start(port) {
      const settings = [...POSTGRES_SETTINGS, `unix_socket_directories='${dirs.runDir}'`];
      const serverOptions = [`-p ${port}`, ...settings.map((setting) => `-c ${setting}`)].join(' ');
      const result = await runAsPostgres(pgCtl, [
        'start',
        '-D',
        dirs.dataDir,
        '-l',
        logFile,
        '-w',
        '-t',
        '60',
        '-s',
        '-o',
        serverOptions,
      ]);
      if (result.code !== 0) {
        throw new ServiceStartError(
          'postgres',
          `pg_ctl start failed (exit ${result.code})`,
          result.output + (await readLog(logFile)),
        );
      }
    },
    async stop() {
      const result = await runAsPostgres(pgCtl, [
        'stop',
        '-D',
        dirs.dataDir,
        '-m',
        'fast',
        '-w',
        '-t',
        '60',
        '-s',
      ]);
      const notRunning = !existsSync(join(dirs.dataDir, 'postmaster.pid'));
      if (result.code !== 0 && !notRunning) {
        throw new ServiceStartError(
          'postgres',
          `pg_ctl stop failed (exit ${result.code})`,
          result.output,
        );
      }
    },
  };
}
