import { describe, expect, it } from 'vitest';
import { parseEnvConfig } from './env-config.js';
import { parseJob } from './job-catalog.js';

const DB = 'postgres://u:p@localhost:5432/cairn';

describe('parseEnvConfig', () => {
  it('defaults to the postgres backend and the scripted model without REDIS_URL and OPENAI_API_KEY', () => {
    const config = parseEnvConfig({ DATABASE_URL: DB });
    expect(config).toMatchObject({ queueBackend: 'postgres', queueName: 'cairn-runs', model: 'scripted', workerConcurrency: 10, lockMs: 1000, stalledIntervalMs: 250 });
    expect(parseEnvConfig({ DATABASE_URL: DB, REDIS_URL: 'redis://localhost:6379' }).queueBackend).toBe('redis');
  });

  it('fails fast naming the bad variable', () => {
    expect(() => parseEnvConfig({})).toThrow(/^DATABASE_URL/);
    expect(() => parseEnvConfig({ DATABASE_URL: DB, WORKER_CONCURRENCY: 'ten' })).toThrow(/^WORKER_CONCURRENCY/);
    expect(() => parseEnvConfig({ DATABASE_URL: DB, CAIRN_MODEL: 'gpt-4' })).toThrow(/^CAIRN_MODEL/);
    expect(() => parseEnvConfig({ DATABASE_URL: DB, CAIRN_QUEUE_BACKEND: 'redis' })).toThrow(/^REDIS_URL/);
  });
});

describe('parseJob', () => {
  it('accepts catalog jobs and rejects bad data with the field name', () => {
    const runId = '7f1c9d5e-2b7a-4c1e-9a39-0d6f2f1c1a11';
    expect(parseJob('continue', { runId, reason: 'reconciled' })).toEqual({ name: 'continue', data: { runId, reason: 'reconciled' } });
    expect(() => parseJob('run', { runId: 'nope' })).toThrow(/runId/);
    expect(() => parseJob('continue', { runId, reason: 'whim' })).toThrow(/reason/);
    expect(() => parseJob('other', { runId })).toThrow(/unknown job name/);
  });
});
