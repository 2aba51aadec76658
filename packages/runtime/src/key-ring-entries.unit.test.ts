import { describe, expect, it } from 'vitest';
import { resolveEnvConfig } from './env-config.js';
import { parseKeyRing } from './key-ring-entries.js';

const DB = 'postgres://u:p@localhost:5432/cairn';

/** The ConfigError message `resolveEnvConfig` throws for `env` (as both the producer and workers start with it). */
function refusal(env: NodeJS.ProcessEnv): string {
  try {
    resolveEnvConfig({}, { DATABASE_URL: DB, ...env });
  } catch (error) {
    expect((error as Error).name).toBe('ConfigError');
    return (error as Error).message;
  }
  throw new Error(`accepted ${JSON.stringify(env)}`);
}

describe('the API key ring', () => {
  it('reads admin keys, tenant-bound keys (split at the first ":") and read-only keys', () => {
    expect(parseKeyRing(['ops-key', 'acme:k1', 'globex:k:2'], ['acme:r1', 'r2'])).toEqual([
      {
        variable: 'CAIRN_API_KEYS',
        position: 1,
        access: 'full',
        tenantId: null,
        key: 'ops-key',
        entry: 'ops-key',
      },
      {
        variable: 'CAIRN_API_KEYS',
        position: 2,
        access: 'full',
        tenantId: 'acme',
        key: 'k1',
        entry: 'acme:k1',
      },
      {
        variable: 'CAIRN_API_KEYS',
        position: 3,
        access: 'full',
        tenantId: 'globex',
        key: 'k:2',
        entry: 'globex:k:2',
      },
      {
        variable: 'CAIRN_READ_API_KEYS',
        position: 1,
        access: 'read',
        tenantId: 'acme',
        key: 'r1',
        entry: 'acme:r1',
      },
      {
        variable: 'CAIRN_READ_API_KEYS',
        position: 2,
        access: 'read',
        tenantId: null,
        key: 'r2',
        entry: 'r2',
      },
    ]);
    expect(
      resolveEnvConfig(
        {},
        { DATABASE_URL: DB, CAIRN_API_KEYS: ' a , acme:b,', CAIRN_READ_API_KEYS: 'c' },
      ),
    ).toMatchObject({
      apiKeys: ['a', 'acme:b'],
      readApiKeys: ['c'],
    });
  });

  it('refuses a key listed twice, whatever it would mean, naming both entries but never the key', () => {
    const shared = 'shared-secret-key';
    const cases: [NodeJS.ProcessEnv, RegExp][] = [
      [
        { CAIRN_API_KEYS: `acme:${shared},globex:${shared}` },
        /^CAIRN_API_KEYS: entry 2 \(tenant "globex"\) has the same key as CAIRN_API_KEYS entry 1 \(tenant "acme"\)/,
      ],
      [
        { CAIRN_API_KEYS: `${shared},acme:${shared}` },
        /^CAIRN_API_KEYS: entry 2 \(tenant "acme"\) has the same key as CAIRN_API_KEYS entry 1 \(an admin key\)/,
      ],
      [
        { CAIRN_API_KEYS: `${shared},${shared}` },
        /^CAIRN_API_KEYS: entry 2 \(an admin key\) has the same key as CAIRN_API_KEYS entry 1/,
      ],
      [
        { CAIRN_API_KEYS: `a,${shared}`, CAIRN_READ_API_KEYS: shared },
        /^CAIRN_READ_API_KEYS: entry 1 \(an admin key\) has the same key as CAIRN_API_KEYS entry 2/,
      ],
    ];
    for (const [env, expected] of cases) {
      const message = refusal(env);
      expect(message, JSON.stringify(env)).toMatch(expected);
      expect(message).not.toContain(shared);
    }
  });

  it('refuses an entry with ":" that is not tenant:key, and reserved tenant names, without echoing the key', () => {
    for (const [env, expected] of [
      [
        { CAIRN_API_KEYS: 'ok-key,acme corp:k2' },
        /^CAIRN_API_KEYS: entry 2 has a ":" but is not tenant:key/,
      ],
      [{ CAIRN_API_KEYS: ':k2' }, /^CAIRN_API_KEYS: entry 1 has a ":" but is not tenant:key/],
      [
        { CAIRN_READ_API_KEYS: 'acme:' },
        /^CAIRN_READ_API_KEYS: entry 1 has a ":" but is not tenant:key/,
      ],
      [{ CAIRN_API_KEYS: 'admin:xyz-key' }, /^CAIRN_API_KEYS: entry 1: tenant "admin" is reserved/],
      [
        { CAIRN_API_KEYS: 'a,Admin:xyz-key' },
        /^CAIRN_API_KEYS: entry 2: tenant "Admin" is reserved/,
      ],
      [
        { CAIRN_READ_API_KEYS: 'null:xyz-key' },
        /^CAIRN_READ_API_KEYS: entry 1: tenant "null" is reserved/,
      ],
    ] as [NodeJS.ProcessEnv, RegExp][]) {
      const message = refusal(env);
      expect(message, JSON.stringify(env)).toMatch(expected);
      expect(message).not.toMatch(/k2|xyz-key/);
    }
  });

  it('checks keys given to resolveEnvConfig by code as it checks the environment', () => {
    expect(() => resolveEnvConfig({ databaseUrl: DB, apiKeys: ['k', 'acme:k'] }, {})).toThrow(
      /^CAIRN_API_KEYS: entry 2 \(tenant "acme"\)/,
    );
    expect(() => resolveEnvConfig({ databaseUrl: DB, readApiKeys: ['admin:r'] }, {})).toThrow(
      /^CAIRN_READ_API_KEYS: entry 1: tenant "admin"/,
    );
  });
});
