import { parseEnvConfig } from '@cairn/runtime';
import { afterEach, describe, expect, it } from 'vitest';
import {
  openProducerFixture,
  type ProducerFixture,
} from '../../apps/producer/src/test-support/producer-fixture.js';
import type { AppDeps } from '../../apps/producer/src/app.js';

const FULL = 'full-key-0123456789';
const READ = 'read-key-abcdef';

let fx: ProducerFixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

async function open(overrides: Partial<AppDeps>): Promise<ProducerFixture> {
  fx = await openProducerFixture(overrides);
  return fx;
}

function send(method: string, path: string, key?: string, body?: unknown): Promise<Response> {
  return Promise.resolve(
    fx!.app.request(path, {
      method,
      headers: {
        ...(key ? { Authorization: `Bearer ${key}` } : {}),
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    }),
  );
}

async function created(res: Response): Promise<{ run_id: string; session_id: string }> {
  expect(res.status).toBe(202);
  return (await res.json()) as { run_id: string; session_id: string };
}

describe('read-only API keys', () => {
  it('read everything, Bull Board included, but every write answers 403 in JSON', async () => {
    const f = await open({ apiKeys: [FULL], readApiKeys: [READ] });
    const { run_id } = await created(
      await send('POST', '/v1/teams/research-team/runs', FULL, { input: 'x' }),
    );
    const queue = f.queue.name;

    for (const path of [
      `/v1/runs/${run_id}`,
      '/v1/sessions/nope',
      '/readyz',
      '/metrics',
      '/admin/queues',
      '/admin/queues/api/queues',
    ]) {
      expect([200, 404], path).toContain((await send('GET', path, READ)).status);
    }
    for (const [method, path, body] of [
      ['POST', '/v1/teams/research-team/runs', { input: 'x' }],
      ['POST', '/v1/agents/researcher/runs', { input: 'x' }],
      ['POST', `/v1/runs/${run_id}/continue`, {}],
      ['POST', `/v1/runs/${run_id}/cancel`, undefined],
      ['PUT', `/admin/queues/api/queues/${queue}/pause`, undefined],
      ['PUT', `/admin/queues/api/queues/${queue}/clean/completed`, undefined],
      ['DELETE', `/admin/queues/api/queues/${queue}/obliterate`, undefined],
    ] as const) {
      const res = await send(method, path, READ, body);
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(await res.json()).toMatchObject({ error: 'forbidden' });
    }
    expect(await f.queue.queue.isPaused()).toBe(false);
    expect((await f.client.getRun(run_id))!.status).toBe('PENDING');

    expect((await send('PUT', `/admin/queues/api/queues/${queue}/pause`, FULL)).status).toBe(200);
    expect(await f.queue.queue.isPaused()).toBe(true);
    expect((await send('POST', `/v1/runs/${run_id}/cancel`, FULL)).status).toBe(202);
  });

  it('answers 401, not 403, for an unknown key, and asks for a bearer key', async () => {
    await open({ apiKeys: [FULL], readApiKeys: [READ] });
    for (const key of [undefined, 'nope', `${READ}x`, READ.slice(0, -1), `${FULL} `.repeat(2)]) {
      const res = await send('POST', '/v1/teams/research-team/runs', key, { input: 'x' });
      expect(res.status, String(key)).toBe(401);
      expect(res.headers.get('WWW-Authenticate')).toBe('Bearer');
    }
    expect((await send('GET', '/healthz')).status).toBe(200);
  });

  it('turn auth on by themselves: with only read keys, nothing can be written', async () => {
    await open({ readApiKeys: [READ] });
    expect((await send('GET', '/metrics')).status).toBe(401);
    expect((await send('GET', '/metrics', READ)).status).toBe(200);
    expect((await send('POST', '/v1/teams/research-team/runs', READ, { input: 'x' })).status).toBe(
      403,
    );
  });
});

describe('request limits', () => {
  it('answers 413 for a body over maxBodyBytes, before parsing it', async () => {
    const f = await open({ limits: { maxBodyBytes: 2_000 } });
    const res = await send('POST', '/v1/teams/research-team/runs', undefined, {
      input: 'x'.repeat(3_000),
    });
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ error: 'payload_too_large' });
    expect((await f.queue.queue.getJobCounts()).waiting).toBe(0);
  });

  it('answers 422 naming the field for an input or metadata over its limit, on create and continue', async () => {
    const f = await open({ limits: { maxInputChars: 50, maxMetadataChars: 100 } });
    const long = await send('POST', '/v1/teams/research-team/runs', undefined, {
      input: 'x'.repeat(51),
    });
    expect(long.status).toBe(422);
    expect(await long.json()).toMatchObject({
      error: 'field_too_long',
      message: 'input is 51 characters long; the limit is 50',
    });
    const meta = await send('POST', '/v1/teams/research-team/runs', undefined, {
      input: 'x',
      metadata: { note: 'y'.repeat(100) },
    });
    expect(meta.status).toBe(422);
    expect(await meta.json()).toMatchObject({
      error: 'field_too_long',
      message: expect.stringContaining('metadata'),
    });

    const { run_id } = await created(
      await send('POST', '/v1/teams/research-team/runs', undefined, {
        input: 'x'.repeat(50),
        metadata: { ok: true },
      }),
    );
    await f.fail(run_id);
    const cont = await send('POST', `/v1/runs/${run_id}/continue`, undefined, {
      input: 'y'.repeat(51),
    });
    expect(cont.status).toBe(422);
    expect((await f.client.getRun(run_id))!.status).toBe('ERROR');
  });

  it('answers 429 once a session holds maxRunsPerSession runs, forks included; other sessions are unaffected', async () => {
    const f = await open({ limits: { maxRunsPerSession: 2 } });
    const body = { input: 'x', session_id: 'busy' };
    const first = await created(await send('POST', '/v1/agents/researcher/runs', undefined, body));
    await created(await send('POST', '/v1/teams/research-team/runs', undefined, body));
    const third = await send('POST', '/v1/agents/researcher/runs', undefined, body);
    expect(third.status).toBe(429);
    expect(await third.json()).toMatchObject({
      error: 'too_many_runs',
      message: expect.stringContaining('busy'),
    });

    await f.complete(first.run_id, 'done');
    const fork = await send('POST', `/v1/runs/${first.run_id}/continue`, undefined, {
      fork: true,
      input: 'more',
    });
    expect(fork.status).toBe(429);
    await created(
      await send('POST', '/v1/agents/researcher/runs', undefined, {
        input: 'x',
        session_id: 'quiet',
      }),
    );
    expect((await f.client.getSession({ tenantId: null, sessionId: 'busy' }))!.runs).toHaveLength(
      2,
    );
  });
});

describe('limits and keys from the environment', () => {
  const base = { DATABASE_URL: 'postgres://localhost/x' };
  it('reads CAIRN_READ_API_KEYS, CAIRN_MAX_INPUT_CHARS and CAIRN_MAX_RUNS_PER_SESSION', () => {
    expect(parseEnvConfig(base)).toMatchObject({
      readApiKeys: [],
      maxInputChars: 100_000,
      maxRunsPerSession: 1000,
    });
    expect(
      parseEnvConfig({
        ...base,
        CAIRN_READ_API_KEYS: ' r1 , r2,',
        CAIRN_MAX_INPUT_CHARS: '2000',
        CAIRN_MAX_RUNS_PER_SESSION: '5',
      }),
    ).toMatchObject({ readApiKeys: ['r1', 'r2'], maxInputChars: 2000, maxRunsPerSession: 5 });
    expect(() => parseEnvConfig({ ...base, CAIRN_MAX_RUNS_PER_SESSION: '0' })).toThrow(
      /CAIRN_MAX_RUNS_PER_SESSION/,
    );
    expect(() => parseEnvConfig({ ...base, CAIRN_MAX_INPUT_CHARS: 'lots' })).toThrow(
      /CAIRN_MAX_INPUT_CHARS/,
    );
  });
});

describe('fleet-wide data: /metrics and /readyz detail for admin keys only', () => {
  const ADMIN = 'admin-key-0123456789';
  const ADMIN_READ = 'admin-read-key-0123456789';
  const TENANT = 'acme:acme-key-0123456789';
  const TENANT_READ = 'acme:acme-read-key-0123456789';
  const keyOf = (entry: string) => entry.slice(entry.indexOf(':') + 1);

  it('serves /metrics to admin keys (read-only ones too) and answers a tenant key 403 saying it needs an admin key', async () => {
    await open({ apiKeys: [ADMIN, TENANT], readApiKeys: [ADMIN_READ, TENANT_READ] });
    for (const key of [keyOf(TENANT), keyOf(TENANT_READ)]) {
      const res = await send('GET', '/metrics', key);
      expect(res.status, key).toBe(403);
      expect(await res.json()).toMatchObject({
        error: 'forbidden',
        message: expect.stringMatching(/\/metrics.*admin key/),
      });
    }
    for (const key of [ADMIN, ADMIN_READ]) {
      const res = await send('GET', '/metrics', key);
      expect(res.status, key).toBe(200);
      expect(await res.text()).toContain('cairn_runs_paused');
    }
    expect((await send('GET', '/metrics')).status).toBe(401);
  });

  it('answers /readyz without a key (probes send none), naming a failed dependency but not its error, which only an admin key sees', async () => {
    const refused = 'connect ECONNREFUSED 10.20.30.40:5432';
    await open({
      apiKeys: [ADMIN, TENANT],
      readApiKeys: [ADMIN_READ],
      healthChecks: { postgres: () => Promise.reject(new Error(refused)) },
    });
    for (const key of [undefined, keyOf(TENANT), 'not-a-key']) {
      const res = await send('GET', '/readyz', key);
      expect(res.status, String(key)).toBe(503);
      const text = await res.text();
      expect(text).not.toContain('10.20.30.40');
      expect(JSON.parse(text)).toMatchObject({
        error: 'not_ready',
        message: 'not ready: postgres unavailable',
        checks: { postgres: 'unavailable' },
      });
      expect(JSON.parse(text)).not.toHaveProperty('details');
    }
    for (const key of [ADMIN, ADMIN_READ]) {
      const res = await send('GET', '/readyz', key);
      expect(res.status, key).toBe(503);
      expect(await res.json()).toMatchObject({
        checks: { postgres: 'unavailable' },
        details: { postgres: refused },
      });
    }
  });
});

describe('security headers', () => {
  /** The headers that keep a browser from framing, sniffing or scripting an answer, as a browser reads them. */
  function expectLockedDown(res: Response, what: string): string {
    const csp = res.headers.get('Content-Security-Policy') ?? '';
    expect(csp, what).toContain("frame-ancestors 'none'");
    expect(res.headers.get('X-Frame-Options'), what).toBe('DENY');
    expect(res.headers.get('X-Content-Type-Options'), what).toBe('nosniff');
    return csp;
  }

  it('come with every JSON answer, errors and 404s included, and an API answer may load nothing', async () => {
    await open({ apiKeys: [FULL] });
    const answers: [string, Response][] = [
      ['200', await send('GET', '/healthz')],
      ['401', await send('GET', '/v1/runs/nope')],
      ['404 run', await send('GET', '/v1/runs/nope', FULL)],
      ['404 route', await send('GET', '/no/such/route', FULL)],
      ['400', await send('POST', '/v1/teams/research-team/runs', FULL, '{not json')],
      ['metrics', await send('GET', '/metrics', FULL)],
    ];
    for (const [what, res] of answers) {
      const csp = expectLockedDown(res, what);
      expect(csp, what).toContain("default-src 'none'");
    }
  });

  it("come with Bull Board's page, whose policy lets it load its own scripts and styles only", async () => {
    await open({ apiKeys: [FULL] });
    const page = await send('GET', '/admin/queues', FULL);
    expect(page.status).toBe(200);
    const csp = expectLockedDown(page, 'Bull Board');
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-eval');
    const api = await send('GET', '/admin/queues/api/queues', FULL);
    expectLockedDown(api, 'Bull Board API');
  });

  it('come with the run pages, their assets and their sign-in page', async () => {
    await open({ apiKeys: [FULL] });
    for (const path of ['/ui/login', '/ui/assets/ui.js']) {
      const res = await send('GET', path);
      expect(res.status, path).toBe(200);
      expect(expectLockedDown(res, path)).toContain("script-src 'self'");
    }
  });
});
