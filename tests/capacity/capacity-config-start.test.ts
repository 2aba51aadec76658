import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, spawnApp, type CairnApp } from '@cairn/services';
import { afterEach, describe, expect, it } from 'vitest';
import { startWorker } from '../../apps/worker/src/start-worker.js';

// Nothing listens there: a worker that got past its configuration would fail on connecting instead.
const UNREACHABLE_DB = 'postgres://cairn:cairn@127.0.0.1:1/cairn';
const BAD_LIMITS_REGISTRY = fileURLToPath(new URL('./bad-limits-registry.ts', import.meta.url));

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('model limits that do not parse', () => {
  it('make `npm run worker` exit 2 naming the CAIRN_MODEL_LIMITS entry and field', async () => {
    dir = mkdtempSync(join(tmpdir(), 'cairn-limits-'));
    const logFile = join(dir, 'worker.log');
    const worker = spawnApp('worker', {
      name: 'worker',
      logFile,
      env: {
        DATABASE_URL: UNREACHABLE_DB,
        REDIS_URL: undefined,
        CAIRN_MODEL_LIMITS: '[{"model":"a","concurrency":2},{"model":"b","concurrency":"lots"}]',
      },
    });
    expect(await worker.exited).toBe(2);
    expect(readFileSync(logFile, 'utf8')).toMatch(
      /worker: bad configuration: CAIRN_MODEL_LIMITS: entry 1 \(b\): concurrency: /,
    );
  });

  it("stop a worker whose registry module exports malformed modelLimits, naming the module's entry", async () => {
    const error = await startWorker({
      registry: BAD_LIMITS_REGISTRY,
      env: { DATABASE_URL: UNREACHABLE_DB },
    }).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(error?.name).toBe('ConfigError');
    expect(error!.message).toMatch(
      /^CAIRN_REGISTRY: modelLimits of ".*bad-limits-registry\.ts": entry 1 \(openai-chat:\*\): requests_per_minute: /,
    );
  });
});

describe('tenant weights that do not parse', () => {
  it('make `npm run producer` and `npm run worker` exit 2 naming the CAIRN_TENANT_WEIGHTS entry', async () => {
    dir = mkdtempSync(join(tmpdir(), 'cairn-weights-'));
    const bad = [
      [
        'acme:3,globex:0',
        /CAIRN_TENANT_WEIGHTS: entry 1 \("globex:0"\) must be <tenant>:<weight above 0>/,
      ],
      ['acme:3,acme:1', /CAIRN_TENANT_WEIGHTS: tenant "acme" is listed twice/],
      ['acme:lots', /CAIRN_TENANT_WEIGHTS: entry 0 \("acme:lots"\)/],
    ] as const;
    for (const [app, [weights, expected]] of [
      ['producer', bad[0]],
      ['worker', bad[1]],
      ['worker', bad[2]],
    ] as const satisfies readonly (readonly [CairnApp, (typeof bad)[number]])[]) {
      const logFile = join(dir, `${app}-${weights}.log`);
      const proc = spawnApp(app, {
        name: app,
        logFile,
        env: {
          DATABASE_URL: UNREACHABLE_DB,
          REDIS_URL: undefined,
          PORT: String(await freePort()),
          CAIRN_TENANT_WEIGHTS: weights,
        },
      });
      expect(await proc.exited, `${app} ${weights}`).toBe(2);
      expect(readFileSync(logFile, 'utf8')).toMatch(
        new RegExp(`${app}: bad configuration: ${expected.source}`),
      );
    }
  });
});
