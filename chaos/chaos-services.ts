import { startRedis, type RedisService } from '@cairn/services';
import { startRestartablePostgres } from './restartable-postgres.js';

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
  const postgres = await startRestartablePostgres();
  const redis = await startRedis({ ignoreEnv: true, appendonly: true });
  if (!redis) {
    await postgres.stop();
    throw new Error('chaos needs a redis-server binary (none found)');
  }
  return {
    postgresUrl: postgres.url,
    redis,
    restartPostgres: (downMs) => postgres.restart(downMs),
    stop: async () => {
      await Promise.allSettled([postgres.stop(), redis.stop()]);
    },
  };
}
