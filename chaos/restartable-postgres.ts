import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startPostgres, type PostgresService } from '@cairn/services';

/** A Postgres server of its own (never `DATABASE_URL`) that can be stopped and started again in place. */
export interface RestartablePostgres {
  /** Admin URL; the same before and after a restart. */
  url: string;
  /** Fast shutdown (open connections are terminated). */
  stopServer(): Promise<void>;
  /** Starts it again on the same port and data directory. */
  startServer(): Promise<void>;
  /** Stops it, waits `downMs`, starts it again. */
  restart(downMs: number): Promise<void>;
  /** Stops it for good and removes its data. */
  stop(): Promise<void>;
}

/** Starts a fresh Postgres on a fixed free port with a kept data directory, so restarts keep the data and the URL. */
export async function startRestartablePostgres(): Promise<RestartablePostgres> {
  const dataDir = join(tmpdir(), `cairn-restartable-pg-${randomBytes(4).toString('hex')}`);
  const options = { ignoreEnv: true, keepData: true, dataDir, port: await freePort() } as const;
  let server: PostgresService | undefined = await startPostgres(options);
  const url = server.url;
  const stopServer = async () => {
    await server?.stop();
    server = undefined;
  };
  const startServer = async () => {
    server ??= await startPostgres(options);
  };
  return {
    url,
    stopServer,
    startServer,
    restart: async (downMs) => {
      await stopServer();
      await new Promise((resolve) => setTimeout(resolve, downMs));
      await startServer();
    },
    stop: async () => {
      await stopServer();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
