import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createRegistry } from '@cairn/research-team';
import {
  freePort,
  hasTestRedis,
  testDatabase,
  testRedisUrl,
  type TestDatabase,
} from '@cairn/services';
import { createDb, migrate, ServedEntityCatalog } from '@cairn/store';
import { afterEach, expect, it } from 'vitest';
import { waitFor } from '../helpers/wait-for.js';

/** The queue the producer uses: the test Redis when there is one, else BullMQ's PostgreSQL backend. */
const QUEUE_ENV: Record<string, string> = hasTestRedis() ? { REDIS_URL: testRedisUrl() } : {};

const AUTH = { Authorization: 'Bearer secret-key' };

let child: ChildProcess | undefined;
let database: TestDatabase | undefined;

afterEach(async () => {
  if (child && child.exitCode === null) {
    child.kill('SIGKILL');
    await new Promise((resolve) => child!.once('exit', resolve));
  }
  child = undefined;
  await database?.drop();
});

async function waitForHealthz(baseUrl: string, output: () => string): Promise<void> {
  const exited =
    !child || child.exitCode !== null
      ? Promise.resolve()
      : new Promise((resolve) => child!.once('exit', resolve));
  try {
    await waitFor(
      () =>
        fetch(`${baseUrl}/healthz`).then(
          (r) => r.ok,
          () => false,
        ),
      30_000,
      'the producer to answer /healthz',
      exited,
    );
  } catch (error) {
    throw new Error(`${(error as Error).message}:\n${output()}`);
  }
}

/** Records the research team's entities as a worker serving them would at start. */
async function recordServedByAWorker(databaseUrl: string): Promise<void> {
  const db = createDb(databaseUrl);
  try {
    await migrate(db);
    await new ServedEntityCatalog(db).record('worker-1', createRegistry().describeAll());
  } finally {
    await db.destroy();
  }
}

/** Starts `npm run producer`'s entry point with `env` over the test environment; collects what it prints. */
function startProducer(env: Record<string, string>): { output: () => string } {
  let output = '';
  child = spawn(
    process.execPath,
    ['--import', 'tsx', '--conditions=source', 'apps/producer/src/main.ts'],
    {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return { output: () => output };
}

it('a producer started before `npm run migrate` exits 1 with an error that names `npm run migrate`', async () => {
  database = await testDatabase();
  const { output } = startProducer({
    DATABASE_URL: database.url,
    ...QUEUE_ENV,
    CAIRN_QUEUE_NAME: `test-${randomUUID()}`,
    CAIRN_MIGRATE: '0',
    PORT: String(await freePort()),
    LOG_LEVEL: 'info',
  });
  const code = await new Promise<number | null>((resolve) =>
    child!.once('exit', (exitCode) => resolve(exitCode)),
  );
  expect(code).toBe(1);
  expect(output()).toContain(
    'producer could not start: the store is not migrated (pending: 0001_initial',
  );
  expect(output()).toContain('run `npm run migrate` (or set CAIRN_MIGRATE=1)');
  expect(output()).not.toContain('does not exist');
});

it('`npm run producer` serves the API from the environment, with Bull Board assets, and exits cleanly on SIGTERM', async () => {
  database = await testDatabase();
  await recordServedByAWorker(database.url);
  const port = await freePort();
  const metricsPort = await freePort();
  const queueName = `test-${randomUUID()}`;
  const { output } = startProducer({
    DATABASE_URL: database.url,
    ...QUEUE_ENV,
    CAIRN_QUEUE_NAME: queueName,
    CAIRN_MIGRATE: '1',
    CAIRN_API_KEYS: 'other-key, secret-key',
    PORT: String(port),
    CAIRN_METRICS_PORT: String(metricsPort),
    LOG_LEVEL: 'info',
    // The producer validates names from what workers recorded: it loads no registry and needs no model key.
    CAIRN_REGISTRY: './no-such-registry-module.js',
    CAIRN_MODEL: 'openai:gpt-5.4',
    OPENAI_API_KEY: '',
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  await waitForHealthz(baseUrl, output);

  // A probe sends no key.
  expect((await fetch(`${baseUrl}/readyz`)).status).toBe(200);
  const ready = await fetch(`${baseUrl}/readyz`, { headers: AUTH });
  expect(await ready.json()).toMatchObject({
    status: 'ok',
    checks: { postgres: 'ok', [hasTestRedis() ? 'redis' : 'queue']: 'ok' },
  });

  const created = await fetch(`${baseUrl}/v1/teams/research-team/runs`, {
    method: 'POST',
    headers: { ...AUTH, 'Content-Type': 'application/json' },
    body: JSON.stringify({ input: 'Research X', checkpoint: 'tool-batch' }),
  });
  expect(created.status).toBe(202);
  const { run_id } = (await created.json()) as { run_id: string };
  const unknown = await fetch(`${baseUrl}/v1/agents/nobody-serves-this/runs`, {
    method: 'POST',
    headers: { ...AUTH, 'Content-Type': 'application/json' },
    body: JSON.stringify({ input: 'Research X' }),
  });
  expect(unknown.status).toBe(404);
  // A team's member by its path, as the worker announced it.
  const member = await fetch(
    `${baseUrl}/v1/agents/${encodeURIComponent('research-team/researcher')}/runs`,
    {
      method: 'POST',
      headers: { ...AUTH, 'Content-Type': 'application/json' },
      body: JSON.stringify({ input: 'Research X' }),
    },
  );
  expect(member.status).toBe(202);
  const run = await fetch(`${baseUrl}/v1/runs/${run_id}`, { headers: AUTH });
  expect(await run.json()).toMatchObject({ run_id, status: 'PENDING', checkpoint: 'tool-batch' });

  const page = await fetch(`${baseUrl}/admin/queues`, { headers: AUTH });
  expect(page.status).toBe(200);
  const html = await page.text();
  expect(html).toContain('<base href="/admin/queues/"');
  const asset = /src="(static\/js\/[^"]+\.js)"/.exec(html)?.[1];
  expect(asset).toBeDefined();
  const script = await fetch(`${baseUrl}/admin/queues/${asset}`, { headers: AUTH });
  expect(script.status).toBe(200);
  const queues = await fetch(`${baseUrl}/admin/queues/api/queues`, { headers: AUTH });
  expect(JSON.stringify(await queues.json())).toContain(queueName);

  const metrics = await (await fetch(`${baseUrl}/metrics`, { headers: AUTH })).text();
  // The team run and the member run by path wait for a worker.
  expect(metrics).toContain(`cairn_queue_jobs{queue="${queueName}",state="waiting"} 2`);
  // A scraper without a key reads them on the metrics port; the API port wants an admin key.
  expect((await fetch(`${baseUrl}/metrics`)).status).toBe(401);
  const scraped = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
  expect(scraped.status).toBe(200);
  expect(await scraped.text()).toContain(
    `cairn_queue_jobs{queue="${queueName}",state="waiting"} 2`,
  );

  const exited = new Promise<number | null>((resolve) =>
    child!.once('exit', (code) => resolve(code)),
  );
  child!.kill('SIGTERM');
  expect(await exited).toBe(0);
  expect(output()).toContain('producer listening');
});
