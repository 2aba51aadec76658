import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startPostgres, startRedis, type PostgresService, type RedisService } from '@cairn/services';

/** The Postgres and Redis servers of one chaos run, restartable in place. */
export interface ChaosServices {
  /** Admin URL of the Postgres server (stable across restarts). */
  postgresUrl: string;
  redis: RedisService;
  /** Fast-stops Postgres, waits `downMs`, starts it again on the same port and data directory. */
  restartPostgres(downMs: number): Promise<void>;
  stop(): Promise<void>;
}

/** Starts a fresh Postgres (kept data dir, fixed port) and Redis with AOF on, ignoring `DATABASE_URL` / `REDIS_URL`. */
export async function startChaosServices(): Promise<ChaosServices> {
  const dataDir = join(tmpdir(), `cairn-chaos-pg-${randomBytes(4).toString('hex')}`);
  const port = await freePort();
  const options = { ignoreEnv: true, keepData: true, dataDir, port } as const;
  let postgres: PostgresService = await startPostgres(options);
  const redis = await startRedis({ ignoreEnv: true, appendonly: true });
  if (!redis) {
    await postgres.stop();
    rmSync(dataDir, { recursive: true, force: true });
    throw new Error('chaos needs a redis-server binary (none found)');
  }
  return {
    postgresUrl: postgres.url,
    redis,
    restartPostgres: async (downMs) => {
      await postgres.stop();
      await new Promise((resolve) => setTimeout(resolve, downMs));
      postgres = await startPostgres(options);
    },
    stop: async () => {
      await Promise.allSettled([postgres.stop(), redis.stop()]);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
