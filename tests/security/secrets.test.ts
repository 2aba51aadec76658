import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFakeOpenAIServer, type FakeOpenAIServer } from '@cairn/engine/testing';
import {
  createDatabase,
  freePort,
  requiresRedis,
  spawnApp,
  startRedis,
  TEST_DATABASE_URL_VAR,
  type AppProcess,
  type RedisService,
  type TestDatabase,
} from '@cairn/services';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/wait-for.js';
import { postLogin, sendRaw, setCookies, type RawResponse } from './http-client.js';

/** Secret-looking values, each distinctive enough that finding it anywhere is a leak. */
const SECRETS = {
  openaiKey: 'sk-test-0penAI-Secret-4f8e2a',
  postgresPassword: 'pgPassw0rd-Secret-7c1d',
  redisPassword: 'redisPassw0rd-Secret-9b3e',
  apiKey: 'cairn-full-key-Secret-5a6f',
  readApiKey: 'cairn-read-key-Secret-2d4c',
  sessionSecret: 'cairn-session-secret-Secret-8e7f-0123456789abcdef',
};
const ROLE = 'cairn_secret_role';

let dir: string;
let database: TestDatabase;
let redis: RedisService;
let openai: FakeOpenAIServer;
let databaseUrl: string;
let redisUrl: string;
const apps: AppProcess[] = [];
/** Everything that left the system: API answers, SSE streams, stored rows, queue data. */
const captured: string[] = [];

function env(extra: Record<string, string> = {}): Record<string, string | undefined> {
  return {
    DATABASE_URL: databaseUrl,
    REDIS_URL: redisUrl,
    CAIRN_QUEUE_NAME: 'secrets-test',
    CAIRN_MODEL: 'openai-chat:fake-model',
    OPENAI_API_KEY: SECRETS.openaiKey,
    OPENAI_BASE_URL: openai.url,
    CAIRN_API_KEYS: SECRETS.apiKey,
    CAIRN_READ_API_KEYS: SECRETS.readApiKey,
    CAIRN_SESSION_SECRET: SECRETS.sessionSecret,
    CAIRN_MIGRATE: '1',
    RESEARCH_TOOL_DELAY_MS: '50',
    LOG_LEVEL: 'trace',
    ...extra,
  };
}

function start(
  app: 'producer' | 'worker',
  name: string,
  extra: Record<string, string> = {},
): AppProcess {
  const proc = spawnApp(app, { name, env: env(extra), logFile: join(dir, `${name}.log`) });
  apps.push(proc);
  return proc;
}

async function call(
  port: number,
  method: string,
  path: string,
  key: string | undefined,
  body?: unknown,
): Promise<RawResponse> {
  const res = await sendRaw(port, {
    method,
    path,
    headers: {
      ...(key ? { Authorization: `Bearer ${key}` } : {}),
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  captured.push(`${method} ${path} ${res.status} ${JSON.stringify(res.headers)} ${res.body}`);
  return res;
}

function leaksIn(text: string): string[] {
  return Object.entries(SECRETS).flatMap(([name, secret]) =>
    [secret, encodeURIComponent(secret), Buffer.from(secret).toString('base64')].some((form) =>
      text.includes(form),
    )
      ? [name]
      : [],
  );
}

describe('secrets', requiresRedis(), () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cairn-secrets-'));
    const adminUrl = process.env[TEST_DATABASE_URL_VAR]!;
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(
      `DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '${ROLE}') THEN CREATE ROLE ${ROLE} LOGIN; END IF; END $$`,
    );
    await admin.query(`ALTER ROLE ${ROLE} PASSWORD '${SECRETS.postgresPassword}'`);
    database = await createDatabase(adminUrl);
    await admin.query(`ALTER DATABASE "${database.name}" OWNER TO ${ROLE}`);
    await admin.end();
    const url = new URL(database.url);
    url.username = ROLE;
    url.password = SECRETS.postgresPassword;
    databaseUrl = url.toString();

    redis = (await startRedis({ ignoreEnv: true }))!;
    const r = new Redis(redis.url);
    await r.config('SET', 'requirepass', SECRETS.redisPassword);
    r.disconnect();
    redisUrl = `redis://:${SECRETS.redisPassword}@127.0.0.1:${redis.port}`;
    openai = await startFakeOpenAIServer();
  });

  afterAll(async () => {
    for (const app of apps) if (app.alive) app.kill('SIGKILL');
    await Promise.all(apps.map((a) => a.exited));
    await openai?.close();
    await redis?.stop();
    await database?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('never shows OPENAI_API_KEY, database or Redis passwords or API keys in logs, errors, events or API answers', async () => {
    const port = await freePort();
    const producer = start('producer', 'producer', { PORT: String(port) });
    const worker = start('worker', 'worker');
    await Promise.all([
      producer.waitForLog('producer listening', 60_000),
      worker.waitForLog('worker started', 60_000),
    ]);

    openai.enqueue(
      { kind: 'error', status: 429, message: 'Rate limit reached, retry shortly' },
      { kind: 'tool_calls', calls: [{ name: 'slow_search', arguments: { query: 'secrets' } }] },
      {
        kind: 'tool_calls',
        calls: [
          { name: 'slow_fetch_detail', arguments: { item: 'result-a' } },
          { name: 'no_such_tool', arguments: {} },
        ],
      },
      { kind: 'text', text: 'Nothing secret here.' },
    );
    expect(
      (await call(port, 'POST', '/v1/agents/researcher/runs', undefined, { input: 'x' })).status,
    ).toBe(401);
    expect(
      (await call(port, 'POST', '/v1/agents/researcher/runs', SECRETS.readApiKey, { input: 'x' }))
        .status,
    ).toBe(403);
    expect(
      (
        await call(port, 'POST', '/v1/agents/researcher/runs', `${SECRETS.apiKey}-wrong`, {
          input: 'x',
        })
      ).status,
    ).toBe(401);
    const created = await call(port, 'POST', '/v1/agents/researcher/runs', SECRETS.apiKey, {
      input: "Research 'secrets'",
      checkpoint: 'tool-batch',
      session_id: 'secret-session',
    });
    expect(created.status).toBe(202);
    const { run_id: runId } = JSON.parse(created.body) as { run_id: string };

    let status = '';
    await waitFor(
      async () => {
        status = (
          JSON.parse((await call(port, 'GET', `/v1/runs/${runId}`, SECRETS.readApiKey)).body) as {
            status: string;
          }
        ).status;
        return ['COMPLETED', 'ERROR'].includes(status);
      },
      30_000,
      `run ${runId} to end`,
    );
    expect(status).toBe('COMPLETED');
    expect(openai.requests.length).toBe(4);

    await call(port, 'GET', `/v1/runs/${runId}/events`, SECRETS.readApiKey);
    await call(port, 'GET', '/v1/sessions/secret-session', SECRETS.readApiKey);
    await call(port, 'GET', '/readyz', SECRETS.readApiKey);
    await call(port, 'GET', '/metrics', SECRETS.readApiKey);
    await call(port, 'GET', '/admin/queues/api/queues', SECRETS.readApiKey);
    await call(port, 'GET', '/admin/queues', SECRETS.readApiKey);
    // A browser session signed under CAIRN_SESSION_SECRET: its cookies and pages hold neither the key nor the secret.
    const login = await postLogin(port, SECRETS.readApiKey);
    captured.push(`POST /ui/login ${login.status} ${JSON.stringify(login.headers)} ${login.body}`);
    expect(login.status).toBe(303);
    const cookie = setCookies(login).join('; ');
    const page = await sendRaw(port, {
      method: 'GET',
      path: '/ui',
      headers: { Cookie: cookie, Accept: 'text/html' },
    });
    captured.push(page.body);
    expect(page.status).toBe(200);
    await call(port, 'POST', `/v1/runs/${runId}/continue`, SECRETS.apiKey, { input: 'again' });
    await call(port, 'GET', '/v1/runs/00000000-0000-0000-0000-000000000000', SECRETS.apiKey);

    // Processes that cannot reach their servers: the errors they print name the URLs, never the passwords.
    const closedPort = await freePort();
    const noPostgres = start('worker', 'worker-no-postgres', {
      DATABASE_URL: `postgres://${ROLE}:${SECRETS.postgresPassword}@127.0.0.1:${closedPort}/nowhere`,
    });
    const noRedis = start('producer', 'producer-no-redis', {
      PORT: String(await freePort()),
      REDIS_URL: `redis://:${SECRETS.redisPassword}@127.0.0.1:${closedPort}`,
    });
    const wrongRedisPassword = start('worker', 'worker-wrong-redis-password', {
      REDIS_URL: `redis://:${SECRETS.redisPassword}x@127.0.0.1:${redis.port}`,
    });
    expect(await noPostgres.exited).not.toBe(0);
    expect(await noRedis.exited).not.toBe(0);
    expect(await wrongRedisPassword.exited).not.toBe(0);
    // A key ring that does not mean what it says: refused at start, naming the entry, never the key.
    const badKeyRing = start('producer', 'producer-bad-key-ring', {
      PORT: String(await freePort()),
      CAIRN_API_KEYS: `acme:${SECRETS.apiKey},globex:${SECRETS.apiKey}`,
    });
    expect(await badKeyRing.exited).not.toBe(0);

    producer.kill('SIGTERM');
    worker.kill('SIGTERM');
    await Promise.all([producer.exited, worker.exited]);

    const db = new pg.Client({ connectionString: database.url });
    await db.connect();
    for (const table of [
      'runs',
      'run_messages',
      'tool_calls',
      'run_attempts',
      'run_events',
      'sessions',
    ]) {
      captured.push(JSON.stringify((await db.query(`select * from ${table}`)).rows));
    }
    await db.end();
    const queue = new Redis(redisUrl);
    for (const key of await queue.keys('*')) {
      const type = await queue.type(key);
      if (type === 'hash') captured.push(JSON.stringify(await queue.hgetall(key)));
      else if (type === 'string') captured.push((await queue.get(key)) ?? '');
      else if (type === 'list') captured.push(JSON.stringify(await queue.lrange(key, 0, -1)));
      else if (type === 'stream') captured.push(JSON.stringify(await queue.xrange(key, '-', '+')));
    }
    queue.disconnect();

    const logs = readdirSync(dir).map(
      (file) => [file, readFileSync(join(dir, file), 'utf8')] as const,
    );
    expect(logs.find(([file]) => file === 'worker-no-postgres.log')![1]).toMatch(
      /Postgres is unreachable at postgres:\/\/cairn_secret_role:\*\*\*@/,
    );
    expect(logs.find(([file]) => file === 'worker.log')![1]).toContain('run finished');
    expect(captured.join('\n')).toContain('Rate limit reached');
    const leaks = [
      ...logs.flatMap(([file, text]) => leaksIn(text).map((secret) => `${secret} in ${file}`)),
      ...captured.flatMap((text, i) =>
        leaksIn(text).map((secret) => `${secret} in captured #${i}: ${text.slice(0, 120)}`),
      ),
    ];
    expect(leaks).toEqual([]);
  });
});
