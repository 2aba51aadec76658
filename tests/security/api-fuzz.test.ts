import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openProducerFixture, type ProducerFixture } from '../../apps/producer/src/test-support/producer-fixture.js';
import { seededRandom, type Random } from '../../chaos/seeded-random.js';
import { serveApp, type RawRequest, type ServedApp } from './http-client.js';

const JSON_TYPE = { 'Content-Type': 'application/json' };
const KEY = 'fuzz-full-key';
const AUTH = { Authorization: `Bearer ${KEY}` };

let fx: ProducerFixture;
let api: ServedApp;
const runs: Record<'pending' | 'completed' | 'error' | 'cancelled', string> = { pending: '', completed: '', error: '', cancelled: '' };

async function createRun(input: string): Promise<string> {
  const res = await api.send({ method: 'POST', path: '/v1/teams/research-team/runs', headers: { ...JSON_TYPE, ...AUTH }, body: JSON.stringify({ input }) });
  expect(res.status).toBe(202);
  return (JSON.parse(res.body) as { run_id: string }).run_id;
}

/** Every row of every table the API can change, in a stable order, plus the queue's job counts. */
async function snapshot(): Promise<string> {
  const db = fx.client.store.db;
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
  dump.jobs = await fx.queue.queue.getJobCounts();
  return JSON.stringify(dump);
}

const nested = (depth: number, leaf = '1') => `${'{"a":'.repeat(depth)}${leaf}${'}'.repeat(depth)}`;
const nestedArray = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
const SQL = "x'; DROP TABLE runs; --";

/** Bodies every POST endpoint must refuse: malformed, wrongly typed, oversized, hostile. */
const HOSTILE_BODIES: { label: string; body: string | Buffer; headers?: Record<string, string> }[] = [
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
  { label: 'session_id huge', body: JSON.stringify({ input: 'x', session_id: 's'.repeat(100_000) }) },
  { label: 'unknown field SQL', body: JSON.stringify({ input: 'x', [SQL]: 1 }) },
  { label: '__proto__ key', body: '{"input": "x", "__proto__": {"polluted": true}}' },
  { label: 'constructor key', body: '{"input": "x", "constructor": {"prototype": {"polluted": true}}}' },
  { label: '__proto__ in metadata, NUL in input', body: '{"input": "a\\u0000b", "metadata": {"__proto__": {"polluted": true}}}' },
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
  { label: 'huge metadata', body: JSON.stringify({ input: 'x', metadata: { k: 'v'.repeat(900_000) } }) },
  { label: 'oversized body', body: JSON.stringify({ input: 'x'.repeat(3 * 1024 * 1024) }) },
  { label: 'invalid UTF-8', body: Buffer.concat([Buffer.from('{"input":"'), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from('"}')]) },
  { label: 'UTF-16 body', body: Buffer.from('{"input":"x"}', 'utf16le') },
  { label: 'text/plain JSON', body: '{"input": "a valid body"}', headers: { 'Content-Type': 'text/plain' } },
  { label: 'form encoded', body: 'input=hello', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } },
  { label: 'multipart', body: '--b\r\nContent-Disposition: form-data; name="input"\r\n\r\nhi\r\n--b--', headers: { 'Content-Type': 'multipart/form-data; boundary=b' } },
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
  const strings = ['', ' ', SQL, '\u0000', '\ud800', '<script>alert(1)</script>', '${jndi:ldap://x}', '%s%s%n', 'ðŸ’©', '\n\r\t', 'null'];
  const keys = ['input', 'session_id', 'user_id', 'checkpoint', 'metadata', 'fork', 'approvals', '__proto__', 'constructor', 'prototype', SQL, ''];
  const pick = <T,>(items: readonly T[]) => items[Math.floor(random() * items.length)]!;
  const value = (depth: number): unknown => {
    const kind = Math.floor(random() * (depth > 3 ? 5 : 7));
    if (kind === 0) return pick(strings);
    if (kind === 1) return random() < 0.5 ? Math.floor(random() * 1e6) : -random() * 1e308;
    if (kind === 2) return random() < 0.5;
    if (kind === 3) return null;
    if (kind === 4) return 'y'.repeat(Math.floor(random() * 300_000));
    if (kind === 5) return Array.from({ length: Math.floor(random() * 4) }, () => value(depth + 1));
    return Object.fromEntries(Array.from({ length: Math.floor(random() * 4) }, () => [pick(keys), value(depth + 1)]));
  };
  return Array.from({ length: count }, () => {
    const body = Object.fromEntries(Array.from({ length: 1 + Math.floor(random() * 4) }, () => [pick(keys), value(0)]));
    // Keep it refusable: a body the API may accept gets a field no schema knows.
    return JSON.stringify({ ...body, [`unknown_${Math.floor(random() * 1e6)}`]: value(1) });
  });
}

/** What is wrong with an answer that should be a JSON 4xx, or undefined when it is one. */
function problemWith(req: RawRequest, res: { status: number; headers: Record<string, unknown>; body: string }, label: string): string | undefined {
  const where = `${req.method} ${req.path.slice(0, 80)} [${label}] -> ${res.status} ${res.body.slice(0, 120)}`;
  if (res.status < 400 || res.status >= 500) return where;
  if (!/^application\/json/.test(String(res.headers['content-type']))) return `${where} (not JSON)`;
  try {
    const body = JSON.parse(res.body) as { error?: unknown; message?: unknown };
    if (typeof body.error !== 'string' || typeof body.message !== 'string') return `${where} (no error/message)`;
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
    const cancel = await api.send({ method: 'POST', path: `/v1/runs/${runs.cancelled}/cancel`, headers: AUTH });
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
        requests.push({ req: { method: 'POST', path, body, headers: { ...AUTH, ...(headers ?? JSON_TYPE) } }, label });
      }
      for (const [i, body] of randomBodies(seededRandom(path.length), 40).entries()) {
        requests.push({ req: { method: 'POST', path, body, headers: { ...AUTH, ...JSON_TYPE } }, label: `random #${i}` });
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
        requests.push({ req: { method, path, headers: { ...AUTH, ...JSON_TYPE }, body: method === 'POST' ? '{"input":"x"}' : undefined }, label: 'hostile id' });
      }
    }
    for (const header of ['-1', 'abc', '1e309', '9'.repeat(400), '__proto__', SQL, '0x10']) {
      requests.push({ req: { method: 'GET', path: `/v1/runs/${runs.completed}/events`, headers: { ...AUTH, 'Last-Event-ID': header } }, label: 'Last-Event-ID' });
      requests.push({ req: { method: 'GET', path: `/v1/runs/${runs.completed}/events?after=${encodeURIComponent(header)}`, headers: AUTH }, label: 'after' });
    }
    for (const [method, path] of [
      ['DELETE', `/v1/runs/${runs.pending}`],
      ['PUT', `/v1/runs/${runs.pending}/cancel`],
      ['PATCH', '/v1/teams/research-team/runs'],
      ['GET', '/v1/teams/research-team/runs'],
      ['POST', '/v1/runs'],
      ['GET', '/v1/../../etc/passwd'],
    ] as const) {
      requests.push({ req: { method, path, headers: { ...AUTH, ...JSON_TYPE }, body: method === 'GET' ? undefined : '{}' }, label: 'unknown route' });
    }
    for (const authorization of ['', 'Bearer', 'Bearer ', `Bearer ${KEY}x`, `Basic ${Buffer.from(`${KEY}:`).toString('base64')}`, `Bearer ${'k'.repeat(10_000)}`, `Bearer ${SQL}`]) {
      for (const path of ['/v1/teams/research-team/runs', `/v1/runs/${runs.pending}/cancel`, '/admin/queues/api/queues']) {
        requests.push({ req: { method: 'POST', path, headers: { ...JSON_TYPE, Authorization: authorization }, body: '{"input":"x"}' }, label: 'bad credentials' });
      }
    }

    const problems: string[] = [];
    for (const { req, label } of requests) {
      const res = await api.send(req).catch((error: Error) => error);
      const problem = res instanceof Error ? `${req.method} ${req.path.slice(0, 80)} [${label}] -> ${res.message}` : problemWith(req, res, label);
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
