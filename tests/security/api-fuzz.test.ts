import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  openProducerFixture,
  type ProducerFixture,
} from '../../apps/producer/src/test-support/producer-fixture.js';
import { seededRandom, type Random } from '../../chaos/seeded-random.js';
import {
  FORM_TYPE,
  serveApp,
  signIn,
  type RawRequest,
  type RawResponse,
  type ServedApp,
} from './http-client.js';

const JSON_TYPE = { 'Content-Type': 'application/json' };
const KEY = 'fuzz-full-key';
const AUTH = { Authorization: `Bearer ${KEY}` };

let fx: ProducerFixture;
let api: ServedApp;
const runs: Record<'pending' | 'completed' | 'error' | 'cancelled', string> = {
  pending: '',
  completed: '',
  error: '',
  cancelled: '',
};

async function createRun(input: string): Promise<string> {
  const res = await api.send({
    method: 'POST',
    path: '/v1/teams/research-team/runs',
    headers: { ...JSON_TYPE, ...AUTH },
    body: JSON.stringify({ input }),
  });
  expect(res.status).toBe(202);
  return (JSON.parse(res.body) as { run_id: string }).run_id;
}

/** Every row of every table the API can change, in a stable order, plus the queue's job counts. */
async function snapshot(fixture: ProducerFixture = fx): Promise<string> {
  const db = fixture.store.db;
  const tables: Record<string, string> = {
    sessions: 'session_id',
    runs: 'run_id',
    run_messages: 'run_id, idx',
    tool_calls: 'run_id, tool_call_id',
    run_attempts: 'run_id, epoch',
    run_events: 'run_id, seq',
  };
  const dump: Record<string, unknown> = {};
  for (const [table, order] of Object.entries(tables)) {
    dump[table] = (await sql.raw(`select * from ${table} order by ${order}`).execute(db)).rows;
  }
  dump.jobs = await fixture.queue.queue.getJobCounts();
  return JSON.stringify(dump);
}

const nested = (depth: number, leaf = '1') => `${'{"a":'.repeat(depth)}${leaf}${'}'.repeat(depth)}`;
const nestedArray = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
const SQL = "x'; DROP TABLE runs; --";

/** Bodies every POST endpoint must refuse: malformed, wrongly typed, oversized, hostile. */
const HOSTILE_BODIES: { label: string; body: string | Buffer; headers?: Record<string, string> }[] =
  [
    { label: 'truncated JSON', body: '{"input": ' },
    { label: 'unbalanced', body: '{"input": "x"}}' },
    { label: 'bare word', body: 'nul' },
    { label: 'trailing garbage', body: '{"input":"x"} trailing' },
    { label: 'JSON array', body: '[]' },
    { label: 'JSON string', body: '"input"' },
    { label: 'JSON number', body: '42' },
    { label: 'JSON null', body: 'null' },
    { label: 'JSON true', body: 'true' },
    { label: 'input number', body: '{"input": 1}' },
    { label: 'input array', body: '{"input": ["x"]}' },
    { label: 'input object', body: '{"input": {"$gt": ""}}' },
    { label: 'input null', body: '{"input": null}' },
    { label: 'fork string', body: '{"fork": "yes"}' },
    { label: 'approvals array', body: '{"approvals": []}' },
    { label: 'metadata array', body: '{"input": "x", "metadata": []}' },
    { label: 'checkpoint SQL', body: JSON.stringify({ input: 'x', checkpoint: SQL }) },
    { label: 'session_id number', body: '{"input": "x", "session_id": 7}' },
    {
      label: 'session_id huge',
      body: JSON.stringify({ input: 'x', session_id: 's'.repeat(100_000) }),
    },
    { label: 'unknown field SQL', body: JSON.stringify({ input: 'x', [SQL]: 1 }) },
    { label: '__proto__ key', body: '{"input": "x", "__proto__": {"polluted": true}}' },
    {
      label: 'constructor key',
      body: '{"input": "x", "constructor": {"prototype": {"polluted": true}}}',
    },
    {
      label: '__proto__ in metadata, NUL in input',
      body: '{"input": "a\\u0000b", "metadata": {"__proto__": {"polluted": true}}}',
    },
    { label: 'NUL in input', body: '{"input": "a\\u0000b"}' },
    { label: 'NUL in session_id', body: '{"input": "x", "session_id": "s\\u0000"}' },
    { label: 'NUL in metadata key', body: '{"input": "x", "metadata": {"k\\u0000": 1}}' },
    { label: 'NUL in metadata value', body: '{"input": "x", "metadata": {"k": "v\\u0000"}}' },
    { label: 'lone surrogate in input', body: '{"input": "\\ud800"}' },
    { label: 'deep nesting at the top', body: nested(50_000) },
    { label: 'deep array nesting', body: nestedArray(100_000) },
    { label: 'deep nesting in metadata', body: `{"input": "x", "metadata": ${nested(5_000)}}` },
    { label: 'moderately deep metadata', body: `{"input": "x", "metadata": ${nested(200)}}` },
    { label: 'huge input', body: JSON.stringify({ input: 'x'.repeat(900_000) }) },
    {
      label: 'huge metadata',
      body: JSON.stringify({ input: 'x', metadata: { k: 'v'.repeat(900_000) } }),
    },
    { label: 'oversized body', body: JSON.stringify({ input: 'x'.repeat(3 * 1024 * 1024) }) },
    {
      label: 'invalid UTF-8',
      body: Buffer.concat([
        Buffer.from('{"input":"'),
        Buffer.from([0xff, 0xfe, 0xc3]),
        Buffer.from('"}'),
      ]),
    },
    { label: 'UTF-16 body', body: Buffer.from('{"input":"x"}', 'utf16le') },
    {
      label: 'text/plain JSON',
      body: '{"input": "a valid body"}',
      headers: { 'Content-Type': 'text/plain' },
    },
    {
      label: 'form encoded',
      body: 'input=hello',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    },
    {
      label: 'multipart',
      body: '--b\r\nContent-Disposition: form-data; name="input"\r\n\r\nhi\r\n--b--',
      headers: { 'Content-Type': 'multipart/form-data; boundary=b' },
    },
    { label: 'no content type', body: '{"input": "x"}', headers: {} },
  ];

/** Path parameters that name nothing (or try to escape): every route must answer 4xx. */
const HOSTILE_IDS = [
  encodeURIComponent(SQL),
  '1%20OR%201%3D1',
  '%00',
  '%ff%fe',
  '%E0%A4%A',
  '..%2F..%2Fetc%2Fpasswd',
  '__proto__',
  'constructor',
  'x'.repeat(8_000),
  '%F0%9F%92%A9',
  '00000000-0000-0000-0000-000000000000',
];

/** Random JSON-ish bodies from a seed: mixed types, odd keys, odd strings, nesting. */
function randomBodies(random: Random, count: number): string[] {
  const strings = [
    '',
    ' ',
    SQL,
    '\u0000',
    '\ud800',
    '<script>alert(1)</script>',
    '${jndi:ldap://x}',
    '%s%s%n',
    'ðŸ’©',
    '\n\r\t',
    'null',
  ];
  const keys = [
    'input',
    'session_id',
    'user_id',
    'checkpoint',
    'metadata',
    'fork',
    'approvals',
    '__proto__',
    'constructor',
    'prototype',
    SQL,
    '',
  ];
  const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!;
  const value = (depth: number): unknown => {
    const kind = Math.floor(random() * (depth > 3 ? 5 : 7));
    if (kind === 0) return pick(strings);
    if (kind === 1) return random() < 0.5 ? Math.floor(random() * 1e6) : -random() * 1e308;
    if (kind === 2) return random() < 0.5;
    if (kind === 3) return null;
    if (kind === 4) return 'y'.repeat(Math.floor(random() * 300_000));
    if (kind === 5) return Array.from({ length: Math.floor(random() * 4) }, () => value(depth + 1));
    return Object.fromEntries(
      Array.from({ length: Math.floor(random() * 4) }, () => [pick(keys), value(depth + 1)]),
    );
  };
  return Array.from({ length: count }, () => {
    const body = Object.fromEntries(
      Array.from({ length: 1 + Math.floor(random() * 4) }, () => [pick(keys), value(0)]),
    );
    // Keep it refusable: a body the API may accept gets a field no schema knows.
    return JSON.stringify({ ...body, [`unknown_${Math.floor(random() * 1e6)}`]: value(1) });
  });
}

/** What is wrong with an answer that should be a JSON 4xx, or undefined when it is one. */
function problemWith(
  req: RawRequest,
  res: { status: number; headers: Record<string, unknown>; body: string },
  label: string,
): string | undefined {
  const where = `${req.method} ${req.path.slice(0, 80)} [${label}] -> ${res.status} ${res.body.slice(0, 120)}`;
  if (res.status < 400 || res.status >= 500) return where;
  if (!/^application\/json/.test(String(res.headers['content-type']))) return `${where} (not JSON)`;
  try {
    const body = JSON.parse(res.body) as { error?: unknown; message?: unknown };
    if (typeof body.error !== 'string' || typeof body.message !== 'string')
      return `${where} (no error/message)`;
  } catch {
    return `${where} (unparseable)`;
  }
  return undefined;
}

describe('fuzzing every endpoint', () => {
  beforeAll(async () => {
    fx = await openProducerFixture({ apiKeys: [KEY] });
    api = await serveApp(fx.app);
    runs.pending = await createRun('pending run');
    runs.completed = await createRun('completed run');
    await fx.complete(runs.completed, 'done');
    runs.error = await createRun('error run');
    await fx.fail(runs.error);
    runs.cancelled = await createRun('cancelled run');
    const cancel = await api.send({
      method: 'POST',
      path: `/v1/runs/${runs.cancelled}/cancel`,
      headers: AUTH,
    });
    expect(cancel.status).toBe(202);
  });
  afterAll(async () => {
    await api?.close();
    await fx?.close();
  });

  it('answers every malformed, oversized, wrongly typed or hostile request with a JSON 4xx and changes no stored run', async () => {
    const before = await snapshot();
    const prototypeKeys = Object.getOwnPropertyNames(Object.prototype).sort();
    const postTargets = [
      '/v1/teams/research-team/runs',
      '/v1/agents/researcher/runs',
      `/v1/runs/${runs.pending}/continue`,
      `/v1/runs/${runs.error}/continue`,
      `/v1/runs/${runs.completed}/continue`,
      `/v1/runs/${runs.pending}/cancel`,
      `/v1/runs/${runs.completed}/cancel`,
    ];
    const requests: { req: RawRequest; label: string }[] = [];
    for (const path of postTargets) {
      for (const { label, body, headers } of HOSTILE_BODIES) {
        requests.push({
          req: { method: 'POST', path, body, headers: { ...AUTH, ...(headers ?? JSON_TYPE) } },
          label,
        });
      }
      for (const [i, body] of randomBodies(seededRandom(path.length), 40).entries()) {
        requests.push({
          req: { method: 'POST', path, body, headers: { ...AUTH, ...JSON_TYPE } },
          label: `random #${i}`,
        });
      }
    }
    for (const id of HOSTILE_IDS) {
      for (const [method, path] of [
        ['GET', `/v1/runs/${id}`],
        ['GET', `/v1/runs/${id}/events`],
        ['GET', `/v1/sessions/${id}`],
        ['POST', `/v1/runs/${id}/continue`],
        ['POST', `/v1/runs/${id}/cancel`],
        ['POST', `/v1/teams/${id}/runs`],
        ['POST', `/v1/agents/${id}/runs`],
      ] as const) {
        requests.push({
          req: {
            method,
            path,
            headers: { ...AUTH, ...JSON_TYPE },
            body: method === 'POST' ? '{"input":"x"}' : undefined,
          },
          label: 'hostile id',
        });
      }
    }
    for (const header of ['-1', 'abc', '1e309', '9'.repeat(400), '__proto__', SQL, '0x10']) {
      requests.push({
        req: {
          method: 'GET',
          path: `/v1/runs/${runs.completed}/events`,
          headers: { ...AUTH, 'Last-Event-ID': header },
        },
        label: 'Last-Event-ID',
      });
      requests.push({
        req: {
          method: 'GET',
          path: `/v1/runs/${runs.completed}/events?after=${encodeURIComponent(header)}`,
          headers: AUTH,
        },
        label: 'after',
      });
    }
    for (const [method, path] of [
      ['DELETE', `/v1/runs/${runs.pending}`],
      ['PUT', `/v1/runs/${runs.pending}/cancel`],
      ['PATCH', '/v1/teams/research-team/runs'],
      ['GET', '/v1/teams/research-team/runs'],
      ['POST', '/v1/runs'],
      ['GET', '/v1/../../etc/passwd'],
    ] as const) {
      requests.push({
        req: {
          method,
          path,
          headers: { ...AUTH, ...JSON_TYPE },
          body: method === 'GET' ? undefined : '{}',
        },
        label: 'unknown route',
      });
    }
    for (const authorization of [
      '',
      'Bearer',
      'Bearer ',
      `Bearer ${KEY}x`,
      `Basic ${Buffer.from(`${KEY}:`).toString('base64')}`,
      `Bearer ${'k'.repeat(10_000)}`,
      `Bearer ${SQL}`,
    ]) {
      for (const path of [
        '/v1/teams/research-team/runs',
        `/v1/runs/${runs.pending}/cancel`,
        '/admin/queues/api/queues',
      ]) {
        requests.push({
          req: {
            method: 'POST',
            path,
            headers: { ...JSON_TYPE, Authorization: authorization },
            body: '{"input":"x"}',
          },
          label: 'bad credentials',
        });
      }
    }

    const problems: string[] = [];
    for (const { req, label } of requests) {
      const res = await api.send(req).catch((error: Error) => error);
      const problem =
        res instanceof Error
          ? `${req.method} ${req.path.slice(0, 80)} [${label}] -> ${res.message}`
          : problemWith(req, res, label);
      if (problem) problems.push(problem);
    }
    expect(problems).toEqual([]);

    expect((await api.send({ method: 'GET', path: '/healthz' })).status).toBe(200);
    expect(await snapshot()).toBe(before);
    expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(prototypeKeys);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('still serves valid requests after the fuzzing', async () => {
    const runId = await createRun("Research 'after the storm'");
    const got = await api.send({ method: 'GET', path: `/v1/runs/${runId}`, headers: AUTH });
    expect(got.status).toBe(200);
    expect(JSON.parse(got.body)).toMatchObject({ run_id: runId, status: 'PENDING' });
  });
});

describe('fuzzing as a signed-in browser and as tenant keys', () => {
  const ACME = 'acme:fuzz-acme-key';
  const ACME_READ = 'acme:fuzz-acme-read-key';
  const GLOBEX = 'globex:fuzz-globex-key';
  const READ = 'fuzz-read-key';
  const bearer = (entry: string) => ({
    Authorization: `Bearer ${entry.slice(entry.indexOf(':') + 1)}`,
  });
  const TAKEN_SESSION = 'user-alice';
  let tfx: ProducerFixture;
  let tapi: ServedApp;
  let pendingRun = '';

  beforeAll(async () => {
    tfx = await openProducerFixture({
      apiKeys: [KEY, ACME, GLOBEX],
      readApiKeys: [READ, ACME_READ],
      events: { maxStreamsPerKey: 2 },
    });
    tapi = await serveApp(tfx.app);
    const created = await tapi.send({
      method: 'POST',
      path: '/v1/teams/research-team/runs',
      headers: { ...JSON_TYPE, ...bearer(GLOBEX) },
      body: JSON.stringify({ input: 'globex run', session_id: TAKEN_SESSION }),
    });
    expect(created.status).toBe(202);
    pendingRun = (JSON.parse(created.body) as { run_id: string }).run_id;
  });
  afterAll(async () => {
    await tapi?.close();
    await tfx?.close();
  });

  /** What is wrong with an answer to a browser request: a 5xx, a redirect off the site or with control characters, or a /v1 answer that is not a JSON error. */
  function browserProblem(req: RawRequest, res: RawResponse, label: string): string | undefined {
    const where = `${req.method} ${req.path.slice(0, 80)} [${label}] -> ${res.status} ${res.body.slice(0, 120)}`;
    if (res.status >= 500) return where;
    const location = res.headers.location;
    if (location !== undefined && !/^\/(?![/\\])[\x21-\x7e]*$/.test(String(location)))
      return `${where} (redirect to ${JSON.stringify(location)})`;
    if (req.path.startsWith('/v1/') || req.path === '/metrics') {
      if (res.status < 400) return `${where} (accepted)`;
      return problemWith(req, res, label);
    }
    return undefined;
  }

  it('refuses every hostile write, oversized form and redirect target of a signed-in browser, and changes nothing stored', async () => {
    const before = await snapshot(tfx);
    const readOnly = await signIn(tapi.port, READ);
    const full = await signIn(tapi.port, KEY);
    const forms: { label: string; body: string | Buffer; type: string }[] = [
      {
        label: 'oversized urlencoded',
        body: `_csrf=${readOnly.csrf}&input=${'x'.repeat(3 * 1024 * 1024)}`,
        type: 'application/x-www-form-urlencoded',
      },
      {
        label: 'oversized multipart',
        body: `--b\r\nContent-Disposition: form-data; name="_csrf"\r\n\r\n${readOnly.csrf}\r\n--b\r\nContent-Disposition: form-data; name="input"\r\n\r\n${'x'.repeat(3 * 1024 * 1024)}\r\n--b--`,
        type: 'multipart/form-data; boundary=b',
      },
      {
        label: 'form with the token',
        body: `_csrf=${readOnly.csrf}&input=hello`,
        type: 'application/x-www-form-urlencoded',
      },
      {
        label: 'form without a token',
        body: 'input=hello',
        type: 'application/x-www-form-urlencoded',
      },
      { label: 'JSON without a token', body: '{"input":"hello"}', type: 'application/json' },
      {
        label: 'multipart, broken boundary',
        body: '--z\r\nContent-Disposition: form-data; name="_csrf"\r\n\r\nx',
        type: 'multipart/form-data; boundary=b',
      },
      { label: 'multipart, no boundary', body: 'x', type: 'multipart/form-data' },
    ];
    const requests: { req: RawRequest; label: string; status?: number }[] = [];
    for (const path of [
      '/v1/teams/research-team/runs',
      `/v1/runs/${pendingRun}/cancel`,
      `/v1/runs/${pendingRun}/continue`,
      '/ui/logout',
    ]) {
      for (const method of ['POST', 'PUT']) {
        for (const { label, body, type } of forms) {
          const oversized = label.startsWith('oversized');
          // The read-only session may send its token and is still refused; the full one never sends one.
          requests.push({
            req: { method, path, body, headers: { Cookie: readOnly.cookie, 'Content-Type': type } },
            label: `read-only ${label}`,
            ...(oversized && { status: 413 }),
          });
          if (!label.includes('with the token')) {
            requests.push({
              req: { method, path, body, headers: { Cookie: full.cookie, 'Content-Type': type } },
              label: `full ${label}`,
              ...(oversized && { status: 413 }),
            });
          }
        }
      }
    }
    const hostileNext = [
      '/ui/%0D%0ASet-Cookie:%20pwned=1',
      '//evil.example/',
      '/\\evil.example',
      'https://evil.example/',
      '/ui/%00',
      '/ui/%7F',
      '/ui/%E2%80%A8',
      'javascript:alert(1)',
      `/${'a'.repeat(10_000)}`,
      '/ui/%ff%fe',
    ];
    for (const [i, next] of hostileNext.entries()) {
      requests.push({
        req: { method: 'GET', path: `/ui/login?next=${next}` },
        label: 'login next',
      });
      requests.push({
        req: { method: 'GET', path: `/ui/runs/x?next=${next}`, headers: { Accept: 'text/html' } },
        label: 'redirect to login',
      });
      // From an address of its own: failed sign-ins count toward the throttle of their address.
      requests.push({
        req: {
          method: 'POST',
          path: '/ui/login',
          headers: FORM_TYPE,
          body: `key=${encodeURIComponent(KEY)}&next=${next}`,
          localAddress: `127.0.1.${i + 1}`,
        },
        label: 'signed-in next',
      });
    }
    for (const type of ['multipart/form-data; boundary=b', 'multipart/form-data']) {
      requests.push({
        req: {
          method: 'POST',
          path: '/ui/login',
          headers: { 'Content-Type': type },
          body: '--z\r\nbroken',
          localAddress: '127.0.2.1',
        },
        label: 'unparseable sign-in form',
        status: 400,
      });
    }
    for (const entry of [ACME, ACME_READ, READ]) {
      const label = `tenant or read key ${entry.split(':')[0]}`;
      // An admin read-only key may scrape and read; a tenant's keys see neither the fleet nor another tenant's run.
      requests.push({
        req: { method: 'GET', path: '/metrics', headers: bearer(entry) },
        label,
        status: entry === READ ? 200 : 403,
      });
      requests.push({
        req: { method: 'GET', path: `/v1/runs/${pendingRun}`, headers: bearer(entry) },
        label,
        status: entry === READ ? 200 : 404,
      });
    }
    requests.push({
      req: { method: 'GET', path: '/metrics', headers: { Cookie: readOnly.cookie } },
      label: 'read-only session on metrics',
    });

    const problems: string[] = [];
    for (const { req, label, status } of requests) {
      const res = await tapi.send(req).catch((error: Error) => error);
      if (res instanceof Error) {
        problems.push(`${req.method} ${req.path.slice(0, 80)} [${label}] -> ${res.message}`);
        continue;
      }
      const problem =
        status === undefined
          ? browserProblem(req, res, label)
          : res.status === status
            ? undefined
            : `${req.method} ${req.path.slice(0, 80)} [${label}] -> ${res.status}, expected ${status}`;
      if (problem) problems.push(problem);
    }
    expect(problems).toEqual([]);
    expect(await snapshot(tfx)).toBe(before);
  });

  it("answers a tenant the same for another tenant's session id as for an unused one", async () => {
    const answers = await Promise.all(
      [TAKEN_SESSION, 'user-nobody'].map(async (id) => {
        const res = await tapi.send({
          method: 'GET',
          path: `/v1/sessions/${id}`,
          headers: bearer(ACME),
        });
        return { status: res.status, body: res.body.replaceAll(id, '<id>') };
      }),
    );
    expect(answers[0]).toEqual(answers[1]);
    expect(answers[0]!.status).toBe(404);
    const created = await tapi.send({
      method: 'POST',
      path: '/v1/teams/research-team/runs',
      headers: { ...JSON_TYPE, ...bearer(ACME) },
      body: JSON.stringify({ input: 'acme run', session_id: TAKEN_SESSION }),
    });
    expect(created.status).toBe(202);
    expect(created.body).not.toContain(pendingRun);
  });

  it('answers one stream too many with a JSON 429 and Retry-After, for bearer keys and sessions alike', async () => {
    const browser = await signIn(tapi.port, READ);
    const controllers = [new AbortController(), new AbortController()];
    const open = controllers.map((controller) =>
      fetch(`http://127.0.0.1:${tapi.port}/v1/runs/${pendingRun}/events`, {
        headers: bearer(READ),
        signal: controller.signal,
      }),
    );
    const streams = await Promise.all(open);
    expect(streams.map((s) => s.status)).toEqual([200, 200]);
    for (const headers of [bearer(READ), { Cookie: browser.cookie }]) {
      const res = await tapi.send({
        method: 'GET',
        path: `/v1/runs/${pendingRun}/events`,
        headers,
      });
      expect(problemWith({ method: 'GET', path: 'events' }, res, 'stream cap')).toBeUndefined();
      expect(res.status).toBe(429);
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    }
    for (const controller of controllers) controller.abort();
  });
});
