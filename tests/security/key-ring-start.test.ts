import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRegistry } from '@cairn/research-team';
import { freePort, spawnApp, type CairnApp } from '@cairn/services';
import { afterEach, describe, expect, it } from 'vitest';
import { startProducer } from '../../apps/producer/src/start-producer.js';
import { startWorker } from '../../apps/worker/src/start-worker.js';

const SHARED = 'shared-key-0123456789';
// Nothing listens there: a process that got past its configuration would fail on connecting instead.
const UNREACHABLE_DB = 'postgres://cairn:cairn@127.0.0.1:1/cairn';
const BAD_RINGS: [Record<string, string>, RegExp][] = [
  [
    { CAIRN_API_KEYS: `acme:${SHARED},globex:${SHARED}` },
    /CAIRN_API_KEYS: entry 2 \(tenant "globex"\) has the same key as CAIRN_API_KEYS entry 1 \(tenant "acme"\)/,
  ],
  [
    { CAIRN_API_KEYS: `admin-${SHARED},acme corp:${SHARED}` },
    /CAIRN_API_KEYS: entry 2 has a ":" but is not tenant:key/,
  ],
  [
    { CAIRN_API_KEYS: 'k1-0123456789', CAIRN_READ_API_KEYS: `admin:${SHARED}` },
    /CAIRN_READ_API_KEYS: entry 1: tenant "admin" is reserved/,
  ],
];

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('a key ring that does not mean what it says', () => {
  it('stops startProducer and startWorker before they connect, with a ConfigError naming the entry but not the key', async () => {
    for (const [env, expected] of BAD_RINGS) {
      const base = { DATABASE_URL: UNREACHABLE_DB, ...env };
      for (const start of [
        () => startProducer({ port: 0, env: base }),
        () => startWorker({ registry: createRegistry(), env: base }),
      ]) {
        const error = await start().then(
          () => undefined,
          (e: unknown) => e as Error,
        );
        expect(error?.name, JSON.stringify(env)).toBe('ConfigError');
        expect(error!.message).toMatch(expected);
        expect(error!.message).not.toContain(SHARED);
      }
    }
  });

  it('makes `npm run producer` and `npm run worker` exit 2 naming the entry, never printing the key', async () => {
    dir = mkdtempSync(join(tmpdir(), 'cairn-key-ring-'));
    const [env, expected] = BAD_RINGS[0]!;
    for (const app of ['producer', 'worker'] as CairnApp[]) {
      const logFile = join(dir, `${app}.log`);
      const proc = spawnApp(app, {
        name: app,
        logFile,
        env: {
          DATABASE_URL: UNREACHABLE_DB,
          REDIS_URL: undefined,
          PORT: String(await freePort()),
          ...env,
        },
      });
      expect(await proc.exited, app).toBe(2);
      const log = readFileSync(logFile, 'utf8');
      expect(log).toMatch(new RegExp(`${app}: bad configuration: ${expected.source}`));
      expect(log).not.toContain(SHARED);
    }
  });
});
