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
      deathSignal: true,
    });
    expect(parseEnvConfig({ DATABASE_URL: DB, CAIRN_DEATH_SIGNAL: '0' }).deathSignal).toBe(false);
    expect(parseEnvConfig({ DATABASE_URL: DB }).namedStatements).toBe(true);
    expect(
      parseEnvConfig({ DATABASE_URL: DB, CAIRN_PG_NAMED_STATEMENTS: '0' }).namedStatements,
    ).toBe(false);
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
    expect(() =>
      parseEnvConfig({ DATABASE_URL: DB, CAIRN_ON_ATTEMPTS_EXHAUSTED: 'pause' }),
    ).toThrow(/^CAIRN_ON_ATTEMPTS_EXHAUSTED/);
  });

  it('CAIRN_ON_ATTEMPTS_EXHAUSTED: error by default, or suspend', () => {
    expect(parseEnvConfig({ DATABASE_URL: DB }).onAttemptsExhausted).toBe('error');
    expect(
      parseEnvConfig({ DATABASE_URL: DB, CAIRN_ON_ATTEMPTS_EXHAUSTED: 'suspend' })
        .onAttemptsExhausted,
    ).toBe('suspend');
  });

  it('OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: off by default, on with true or SPAN_ONLY, a value Cairn cannot honour refused', () => {
    const capture = (value?: string) =>
      parseEnvConfig({
        DATABASE_URL: DB,
        ...(value !== undefined && { OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: value }),
      }).captureMessageContent;
    expect(capture()).toBe(false);
    expect(capture('true')).toBe(true);
    expect(capture('SPAN_ONLY')).toBe(true);
    expect(capture('NO_CONTENT')).toBe(false);
    expect(capture('false')).toBe(false);
    expect(() => capture('EVENT_ONLY')).toThrow(
      /^OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: .*spans only/,
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

  it('reads model capacity settings, refusing a malformed limit by entry and field', () => {
    const config = parseEnvConfig({
      DATABASE_URL: DB,
      CAIRN_MODEL_LIMITS:
        '[{"model":"openai-chat:gpt-x","concurrency":8,"requests_per_minute":500},{"model":"openai:*","tokens_per_minute":200000}]',
      CAIRN_CAPACITY_WAIT_MS: '2500',
      CAIRN_TENANT_WEIGHTS: 'acme:3, globex:1',
    });
    expect(config.modelLimits).toEqual([
      { model: 'openai-chat:gpt-x', concurrency: 8, requestsPerMinute: 500 },
      { model: 'openai:*', tokensPerMinute: 200000 },
    ]);
    expect(config.capacityWaitMs).toBe(2500);
    expect(config.tenantWeights).toEqual({ acme: 3, globex: 1 });
    expect(parseEnvConfig({ DATABASE_URL: DB })).toMatchObject({
      modelLimits: [],
      capacityWaitMs: 1000,
      tenantWeights: {},
    });

    const limits = (value: string) => () =>
      parseEnvConfig({ DATABASE_URL: DB, CAIRN_MODEL_LIMITS: value });
    expect(limits('[{"model":"a","concurrency":0}]')).toThrow(
      /^CAIRN_MODEL_LIMITS: entry 0 \(a\): concurrency: /,
    );
    expect(limits('[{"model":"a"},{"model":"b","requests_per_minute":"fast"}]')).toThrow(
      /^CAIRN_MODEL_LIMITS: entry 1 \(b\): requests_per_minute: /,
    );
    expect(limits('[{"model":"a","tokens_per_minut":5}]')).toThrow(
      /^CAIRN_MODEL_LIMITS: entry 0 \(a\): tokens_per_minut: /,
    );
    expect(limits('[{"concurrency":2}]')).toThrow(/^CAIRN_MODEL_LIMITS: entry 0: model: /);
    expect(limits('{"model":"a"}')).toThrow(/^CAIRN_MODEL_LIMITS: expected a JSON array/);
    expect(limits('[{"model":')).toThrow(/^CAIRN_MODEL_LIMITS: not JSON/);
    expect(() =>
      parseEnvConfig({ DATABASE_URL: DB, CAIRN_TENANT_WEIGHTS: 'acme:3,globex' }),
    ).toThrow(/^CAIRN_TENANT_WEIGHTS: entry 1 \("globex"\)/);
    expect(() => parseEnvConfig({ DATABASE_URL: DB, CAIRN_TENANT_WEIGHTS: 'acme:0' })).toThrow(
      /^CAIRN_TENANT_WEIGHTS: entry 0/,
    );
    expect(() => parseEnvConfig({ DATABASE_URL: DB, CAIRN_CAPACITY_WAIT_MS: '-1' })).toThrow(
      /^CAIRN_CAPACITY_WAIT_MS/,
    );
    // The wait of /mcp's start tools: the producer's default when unset.
    expect(parseEnvConfig({ DATABASE_URL: DB }).mcpWaitMs).toBeUndefined();
    expect(parseEnvConfig({ DATABASE_URL: DB, CAIRN_MCP_WAIT_MS: '0' }).mcpWaitMs).toBe(0);
    expect(() => parseEnvConfig({ DATABASE_URL: DB, CAIRN_MCP_WAIT_MS: '5s' })).toThrow(
      /^CAIRN_MCP_WAIT_MS/,
    );
    // Parked runs wait in the model's line unless it is turned off.
    expect(parseEnvConfig({ DATABASE_URL: DB }).capacityLine).toBe(true);
    expect(parseEnvConfig({ DATABASE_URL: DB, CAIRN_CAPACITY_LINE: 'off' }).capacityLine).toBe(
      false,
    );
    expect(() => parseEnvConfig({ DATABASE_URL: DB, CAIRN_CAPACITY_LINE: 'yes' })).toThrow(
      /^CAIRN_CAPACITY_LINE/,
    );
  });

  it('reads tenant day budgets in USD, refusing a malformed entry by its place and text', () => {
    expect(
      parseEnvConfig({ DATABASE_URL: DB, CAIRN_TENANT_BUDGETS: 'acme:25, globex:0.5' })
        .tenantBudgets,
    ).toEqual({ acme: 25, globex: 0.5 });
    expect(parseEnvConfig({ DATABASE_URL: DB }).tenantBudgets).toEqual({});
    const budgets = (value: string) => () =>
      parseEnvConfig({ DATABASE_URL: DB, CAIRN_TENANT_BUDGETS: value });
    expect(budgets('acme:25,globex')).toThrow(
      /^CAIRN_TENANT_BUDGETS: entry 1 \("globex"\) must be <tenant>:<USD per UTC day above 0>/,
    );
    expect(budgets('acme:0')).toThrow(/^CAIRN_TENANT_BUDGETS: entry 0 \("acme:0"\)/);
    expect(budgets('acme:$25')).toThrow(/^CAIRN_TENANT_BUDGETS: entry 0 \("acme:\$25"\)/);
    expect(budgets('acme:1,acme:2')).toThrow(
      /^CAIRN_TENANT_BUDGETS: tenant "acme" is listed twice/,
    );
  });
});
