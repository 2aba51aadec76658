import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { mkdir, mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { once } from 'node:events';
import { ServiceError, ServiceStartError } from './errors.js';
import { registerExitCleanup } from './exit-cleanup.js';
import { findRedisServer } from './find-redis-server.js';
import { freePort } from './free-port.js';
import { waitForRedis } from './wait-for-redis.js';

/** Options of {@link startRedis}. */
export interface StartRedisOptions {
  /** TCP port on 127.0.0.1. @defaultValue a free port */
  port?: number;
  /** Start a server even when `REDIS_URL` is set. @defaultValue false */
  ignoreEnv?: boolean;
  /** Persist every write to an append-only file in `dir` (`appendfsync everysec`), so a restart keeps the data. @defaultValue false */
  appendonly?: boolean;
  /** Working directory (AOF, log). @defaultValue a fresh temp directory */
  dir?: string;
  /** Keep `dir` when stopping. @defaultValue false */
  keepData?: boolean;
  /** More `redis-server` arguments (e.g. `--cluster-enabled yes`), after Cairn's own. @defaultValue none */
  args?: string[];
}

/** Options of {@link RedisService.restart}. */
export interface RedisRestartOptions {
  /** Signal that ends the old server: SIGTERM is a clean shutdown, SIGKILL a crash. @defaultValue 'SIGTERM' */
  signal?: 'SIGTERM' | 'SIGKILL';
}

/** A running (or externally provided) Redis server. */
export interface RedisService {
  /** Connection URL, `redis://127.0.0.1:PORT`. */
  url: string;
  /** Shuts the server down and removes its directory (unless `keepData`); a no-op for `source: 'env'`; idempotent. */
  stop(): Promise<void>;
  /** Where the server came from: `REDIS_URL` or the machine's `redis-server`. */
  source: 'env' | 'machine';
  /** Process id of the current server; changes on restart; undefined for `source: 'env'`. */
  readonly pid?: number;
  /** TCP port the server listens on. */
  port: number;
  /** Stops the server (cleanly or by SIGKILL) and starts it again on the same port and directory; for fault tests. */
  restart(options?: RedisRestartOptions): Promise<void>;
}

const PORT_ATTEMPTS = 3;
const STOP_TIMEOUT_MS = 10_000;

function serverArgs(port: number, dir: string, appendonly: boolean, extra: string[]): string[] {
  const persistence = appendonly
    ? ['--appendonly', 'yes', '--appendfsync', 'everysec']
    : ['--appendonly', 'no'];
  return [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--protected-mode',
    'no',
    '--daemonize',
    'no',
    '--dir',
    dir,
    '--logfile',
    join(dir, 'redis.log'),
    '--save',
    '',
    ...persistence,
    ...extra,
  ];
}

async function kill(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
  await exited;
  clearTimeout(timer);
}

function envService(url: string): RedisService {
  const port = Number(new URL(url).port || 6379);
  return {
    url,
    port,
    source: 'env',
    stop: async () => undefined,
    restart: () => Promise.reject(new ServiceError('cannot restart a Redis given by REDIS_URL')),
  };
}

/**
 * Starts a throwaway Redis server (or returns `REDIS_URL`), ready for commands; undefined when no `redis-server` binary exists.
 *
 * @example
 * const redis = await startRedis();
 * if (redis) try { await useRedis(redis.url); } finally { await redis.stop(); }
 */
export async function startRedis(
  options: StartRedisOptions = {},
): Promise<RedisService | undefined> {
  const envUrl = process.env.REDIS_URL;
  if (envUrl && !options.ignoreEnv) return envService(envUrl);
  const binary = findRedisServer();
  if (!binary) return undefined;

  const dir = options.dir ? resolve(options.dir) : await mkdtemp(join(tmpdir(), 'cairn-redis-'));
  await mkdir(dir, { recursive: true });
  const removeDir = (): void => {
    if (!options.keepData) rmSync(dir, { recursive: true, force: true });
  };
  let child: ChildProcess | undefined;
  const unregister = registerExitCleanup(() => {
    child?.kill('SIGKILL');
    removeDir();
  });

  const launch = async (port: number): Promise<void> => {
    const started = spawn(
      binary,
      serverArgs(port, dir, options.appendonly ?? false, options.args ?? []),
      {
        stdio: 'ignore',
      },
    );
    started.unref();
    started.once('error', () => undefined);
    child = started;
    const isDead = (): boolean => started.exitCode !== null || started.signalCode !== null;
    try {
      await waitForRedis(port, isDead);
    } catch (error) {
      await kill(started, 'SIGKILL');
      const log = await readFile(join(dir, 'redis.log'), 'utf8').catch(() => '');
      throw new ServiceStartError('redis', `redis-server did not start on port ${port}`, log, {
        cause: error,
      });
    }
  };

  let port = options.port ?? 0;
  for (let attempt = 1; ; attempt++) {
    port = options.port ?? (await freePort());
    try {
      await launch(port);
      break;
    } catch (error) {
      const portInUse = error instanceof Error && /address already in use/i.test(error.message);
      if (options.port !== undefined || attempt >= PORT_ATTEMPTS || !portInUse) {
        unregister();
        removeDir();
        throw error;
      }
    }
  }

  let stopping: Promise<void> | undefined;
  const stop = async (): Promise<void> => {
    if (child) await kill(child, 'SIGTERM');
    unregister();
    removeDir();
  };
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    source: 'machine',
    get pid() {
      return child?.pid;
    },
    stop: () => (stopping ??= stop()),
    async restart({ signal = 'SIGTERM' } = {}) {
      if (stopping) throw new ServiceError('cannot restart a stopped Redis');
      if (child) await kill(child, signal);
      await launch(port);
    },
  };
}
