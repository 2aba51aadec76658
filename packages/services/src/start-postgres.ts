import { rmSync } from 'node:fs';
import { createEmbeddedPostgresLauncher } from './embedded-postgres-launcher.js';
import { ServiceStartError } from './errors.js';
import { registerExitCleanup } from './exit-cleanup.js';
import { findPostgresBinaries } from './find-postgres-binaries.js';
import { freePort } from './free-port.js';
import { killPostmasterSync } from './kill-postmaster-sync.js';
import { createMachinePostgresLauncher } from './machine-postgres-launcher.js';
import type { PostgresDirs, PostgresLauncher } from './postgres-launcher.js';
import { preparePostgresDirs } from './prepare-postgres-dirs.js';
import { isRoot, postgresUserIds } from './run-as-postgres.js';
import { waitForPostgres } from './wait-for-postgres.js';

/** Options of {@link startPostgres}. */
export interface StartPostgresOptions {
  /** Data directory (created if missing; an initialised one is reused). @defaultValue a fresh temp directory */
  dataDir?: string;
  /** TCP port on 127.0.0.1. @defaultValue a free port */
  port?: number;
  /** Start a server even when `DATABASE_URL` is set. @defaultValue false */
  ignoreEnv?: boolean;
  /** Keep the data directory when stopping. @defaultValue false */
  keepData?: boolean;
  /** Force a kind of binaries instead of machine-then-embedded. @defaultValue machine binaries if found, else embedded-postgres */
  use?: 'machine' | 'embedded';
}

/** A running (or externally provided) Postgres server. */
export interface PostgresService {
  /** Connection URL of the `postgres` database as the `postgres` superuser. */
  url: string;
  /** Fast shutdown, then removes the data directory (unless `keepData`); a no-op for `source: 'env'`; idempotent. */
  stop(): Promise<void>;
  /** Where the server came from: `DATABASE_URL`, the machine's binaries, or the embedded-postgres package. */
  source: 'env' | 'machine' | 'embedded';
  /** The cluster's data directory; undefined for `source: 'env'`. */
  dataDir?: string;
}

const PORT_ATTEMPTS = 3;

function isPortInUse(error: unknown): boolean {
  return (
    error instanceof Error &&
    /address already in use|could not create any TCP\/IP sockets/i.test(error.message)
  );
}

async function chooseLauncher(
  options: StartPostgresOptions,
): Promise<{ launcher: PostgresLauncher; dirs: PostgresDirs }> {
  const binDir = options.use === 'embedded' ? undefined : findPostgresBinaries();
  if (options.use === 'machine' && !binDir) {
    throw new ServiceStartError(
      'postgres',
      'no Postgres binaries found in /usr/lib/postgresql/*/bin or on PATH',
    );
  }
  const owner = isRoot() ? await postgresUserIds() : undefined;
  const dirs = await preparePostgresDirs(options.dataDir, owner);
  // As root the machine binaries need an existing postgres user; embedded-postgres can create one.
  const useMachine = binDir !== undefined && (!isRoot() || owner !== undefined);
  const launcher = useMachine
    ? createMachinePostgresLauncher(binDir, dirs)
    : createEmbeddedPostgresLauncher(dirs);
  return { launcher, dirs };
}

async function startOnFreePort(
  launcher: PostgresLauncher,
  fixedPort: number | undefined,
): Promise<number> {
  for (let attempt = 1; ; attempt++) {
    const port = fixedPort ?? (await freePort());
    try {
      await launcher.start(port);
      return port;
    } catch (error) {
      if (fixedPort !== undefined || attempt >= PORT_ATTEMPTS || !isPortInUse(error)) throw error;
    }
  }
}

/**
 * Starts a throwaway Postgres server (or returns `DATABASE_URL`), ready to accept connections.
 *
 * @example
 * const postgres = await startPostgres();
 * try { await useDatabase(postgres.url); } finally { await postgres.stop(); }
 */
export async function startPostgres(options: StartPostgresOptions = {}): Promise<PostgresService> {
  const envUrl = process.env.DATABASE_URL;
  if (envUrl && !options.ignoreEnv)
    return { url: envUrl, source: 'env', stop: async () => undefined };

  const { launcher, dirs } = await chooseLauncher(options);
  const dataInsideRunDir = options.dataDir === undefined;
  const removeDirs = (): void => {
    if (!options.keepData) rmSync(dirs.dataDir, { recursive: true, force: true });
    if (!(options.keepData && dataInsideRunDir))
      rmSync(dirs.runDir, { recursive: true, force: true });
  };
  const unregister = registerExitCleanup(() => {
    killPostmasterSync(dirs.dataDir);
    removeDirs();
  });
  let url: string;
  try {
    await launcher.init();
    const port = await startOnFreePort(launcher, options.port);
    url = `postgres://postgres@127.0.0.1:${port}/postgres`;
    await waitForPostgres(url);
  } catch (error) {
    await launcher.stop().catch(() => undefined);
    killPostmasterSync(dirs.dataDir);
    removeDirs();
    unregister();
    throw error;
  }

  let stopping: Promise<void> | undefined;
  const stop = async (): Promise<void> => {
    await launcher.stop();
    unregister();
    removeDirs();
  };
  return { url, source: launcher.source, dataDir: dirs.dataDir, stop: () => (stopping ??= stop()) };
}
