import { describe, expect, it } from 'vitest';
import { parseEnvConfig } from './env-config.js';

const DB = 'postgres://u:p@localhost:5432/cairn';

describe('parseEnvConfig', () => {
  it('defaults to the postgres backend and the scripted model without REDIS_URL and OPENAI_API_KEY', () => {
    const config = parseEnvConfig({ DATABASE_URL: DB });
    expect(config).toMatchObject({
      queueBackend: 'postgres',
      queueName: 'cairn-runs',
      model: 'scripted',
      workerConcurrency: 10,
      lockMs: 1000,
      stalledIntervalMs: 250,
    });
    expect(
      parseEnvConfig({ DATABASE_URL: DB, REDIS_URL: 'redis://localhost:6379' }).queueBackend,
    ).toBe('redis');
  });

  it('fails fast naming the bad variable', () => {
    expect(() => parseEnvConfig({})).toThrow(/^DATABASE_URL/);
    expect(() => parseEnvConfig({ DATABASE_URL: DB, WORKER_CONCURRENCY: 'ten' })).toThrow(
      /^WORKER_CONCURRENCY/,
    );
    expect(() => parseEnvConfig({ DATABASE_URL: DB, CAIRN_MODEL: 'gpt-4' })).toThrow(
      /^CAIRN_MODEL/,
    );
    expect(() => parseEnvConfig({ DATABASE_URL: DB, CAIRN_QUEUE_BACKEND: 'redis' })).toThrow(
      /^REDIS_URL/,
    );
  });

  it('Redis Cluster: several node URLs, a {cairn} prefix by default, a prefix without a hash tag refused', () => {
    const nodes = 'redis://10.0.0.1:7000, redis://10.0.0.2:7000';
    const config = parseEnvConfig({ DATABASE_URL: DB, REDIS_URL: nodes, CAIRN_REDIS_CLUSTER: '1' });
    expect(config).toMatchObject({
      queueBackend: 'redis',
      redisCluster: true,
      queuePrefix: '{cairn}',
    });
    expect(
      parseEnvConfig({
        DATABASE_URL: DB,
        REDIS_URL: nodes,
        CAIRN_REDIS_CLUSTER: '1',
        CAIRN_QUEUE_PREFIX: 'app:{jobs}',
      }).queuePrefix,
    ).toBe('app:{jobs}');
    expect(() =>
      parseEnvConfig({
        DATABASE_URL: DB,
        REDIS_URL: nodes,
        CAIRN_REDIS_CLUSTER: '1',
        CAIRN_QUEUE_PREFIX: 'cairn',
      }),
    ).toThrow(/^CAIRN_QUEUE_PREFIX: must hold a hash tag/);
    expect(() => parseEnvConfig({ DATABASE_URL: DB, REDIS_URL: nodes })).toThrow(
      /^REDIS_URL: names several servers/,
    );
    expect(() =>
      parseEnvConfig({
        DATABASE_URL: DB,
        REDIS_URL: 'redis://a:1,http://b:2',
        CAIRN_REDIS_CLUSTER: '1',
      }),
    ).toThrow(/^REDIS_URL/);
    expect(() =>
      parseEnvConfig({ DATABASE_URL: DB, REDIS_URL: nodes, CAIRN_REDIS_CLUSTER: 'yes' }),
    ).toThrow(/^CAIRN_REDIS_CLUSTER/);
    expect(parseEnvConfig({ DATABASE_URL: DB, REDIS_URL: 'redis://a:1' }).redisCluster).toBe(false);
  });

  it('reads CAIRN_SESSION_SECRET, refusing one too short to sign with without echoing it', () => {
    const secret = 's'.repeat(32);
    expect(
      parseEnvConfig({ DATABASE_URL: DB, CAIRN_SESSION_SECRET: ` ${secret} ` }).sessionSecret,
    ).toBe(secret);
    expect(parseEnvConfig({ DATABASE_URL: DB }).sessionSecret).toBeUndefined();
    expect(() =>
      parseEnvConfig({ DATABASE_URL: DB, CAIRN_SESSION_SECRET: 'short-secret' }),
    ).toThrow(
      /^CAIRN_SESSION_SECRET: must be at least 32 characters long \(e\.g\. openssl rand -hex 32\)$/,
    );
  });
});
