import { Agent, Engine, OpenAIChatModel, Registry, tool, type Permit } from '@cairn/engine';
import { startFakeOpenAIServer, toolResults, type FakeOpenAIServer } from '@cairn/engine/testing';
import { testDatabase, type TestDatabase } from '@cairn/services';
import { createDb, migrate, PostgresCheckpointStore } from '@cairn/store';
import { afterEach, expect, it } from 'vitest';
import { z } from 'zod';
import { createInlineExecutor } from '../execution/inline-executor.js';
import { CairnMetrics } from './cairn-metrics.js';

// The model capacity metrics of a worker, from a real run on the Postgres limiter against a
// fake OpenAI server whose quota answers a real 429.

const MODEL_ID = 'gpt-x';
const MODEL = `openai-chat:${MODEL_ID}`;

let database: TestDatabase | undefined;
let db: ReturnType<typeof createDb> | undefined;
let server: FakeOpenAIServer | undefined;
afterEach(async () => {
  await server?.close();
  await db?.destroy();
  await database?.drop();
  server = db = database = undefined;
});

/** Samples of a scrape as `name{labels}` → value (the exposition format's text). */
async function scrape(metrics: CairnMetrics): Promise<Map<string, number>> {
  const samples = new Map<string, number>();
  for (const line of (await metrics.render()).split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const cut = line.lastIndexOf(' ');
    samples.set(line.slice(0, cut), Number(line.slice(cut + 1)));
  }
  return samples;
}

it("a scrape shows the limiter's waiters and cap per model, a provider's 429 per model and each turn's wait for permits per model and tenant", async () => {
  database = await testDatabase();
  db = createDb(database.url);
  await migrate(db);
  const store = new PostgresCheckpointStore(db);
  const limiter = store.modelCapacity;
  // One request a second: the run's second request, right after its first, gets a 429.
  server = await startFakeOpenAIServer({
    decide: ({ messages }) =>
      toolResults(messages).length === 0
        ? { toolCalls: [{ name: 'ping', arguments: {} }] }
        : { text: 'pong seen' },
    quota: { perModel: { [MODEL_ID]: { requestsPerMinute: 1 } }, windowMs: 1000 },
  });
  const model = new OpenAIChatModel({ model: MODEL_ID, apiKey: 'test-key', baseURL: server.url });
  const ping = tool({
    name: 'ping',
    description: 'Answers pong',
    parameters: z.object({}),
    execute: () => 'pong',
  });
  const registry = new Registry({ agents: [new Agent({ name: 'pinger', model, tools: [ping] })] });
  const limit = { concurrency: 1 };
  const metrics = new CairnMetrics({ modelCapacity: limiter });
  const executor = createInlineExecutor({
    store,
    registry,
    workerId: 'w',
    capacity: { limiter, limits: [{ model: MODEL, ...limit }], pollMs: 25 },
    observe: (observation) => metrics.observe(observation),
  });

  // Another run of the fleet holds the model's only slot.
  const held = await limiter.tryAcquire({
    model: MODEL,
    limit,
    waiterId: 'another-run',
    tenant: '',
    weight: 1,
    priority: 5,
    waitedMs: 0,
    tokens: 1,
  });
  if (!held.granted) throw new Error(`the slot was not free: ${held.reason}`);
  const permit: Permit = held.permit;
  // `run` mode has no checkpoint to park on: the run waits in place, in line.
  const run = await new Engine({ store, registry }).createRun({
    entity: { kind: 'agent', name: 'pinger' },
    input: 'ping please',
    checkpoint: 'run',
    tenantId: 'acme',
  });
  const outcome = executor.execute({
    work: { job: 'run', runId: run.runId, attemptsStarted: 1 },
  }).outcome;

  await expect
    .poll(async () => (await scrape(metrics)).get(`cairn_model_permits_waiting{model="${MODEL}"}`))
    .toBe(1);
  const waiting = await scrape(metrics);
  expect(waiting.get(`cairn_model_concurrency_limit{model="${MODEL}"}`)).toBe(1);
  expect(waiting.get(`cairn_model_rate_limited_total{model="${MODEL}"}`)).toBeUndefined();

  await limiter.release(permit, { ok: true });
  expect(await outcome).toMatchObject({ kind: 'finished', status: 'COMPLETED' });
  expect(server.quota.rejected(MODEL_ID)).toBe(1);

  const after = await scrape(metrics);
  expect(after.get(`cairn_model_rate_limited_total{model="${MODEL}"}`)).toBe(1);
  expect(after.get(`cairn_model_permits_waiting{model="${MODEL}"}`)).toBe(0);
  // The first turn waited for the held slot; the second for the pause its 429 set.
  const series = `{model="${MODEL}",tenant="acme"}`;
  expect(after.get(`cairn_model_capacity_wait_seconds_count${series}`)).toBe(2);
  expect(after.get(`cairn_model_capacity_wait_seconds_sum${series}`)).toBeGreaterThan(0);
  expect(
    after.get(`cairn_model_capacity_wait_seconds_bucket{le="+Inf",model="${MODEL}",tenant="acme"}`),
  ).toBe(2);
  expect(
    [...after.keys()].filter(
      (key) =>
        key.startsWith('cairn_model_capacity_wait_seconds_count') &&
        key !== `cairn_model_capacity_wait_seconds_count${series}`,
    ),
  ).toEqual([]);
  await executor.close();
});

it('leaves the model gauges empty, and the scrape answering, when the limiter does not answer', async () => {
  const metrics = new CairnMetrics({
    modelCapacity: { snapshot: () => Promise.reject(new Error('limiter unreachable')) },
  });
  const text = await metrics.render();
  expect(text).toContain('# TYPE cairn_model_permits_waiting gauge');
  expect(text).not.toMatch(/^cairn_model_permits_waiting\{/m);
  expect(text).not.toMatch(/^cairn_model_concurrency_limit\{/m);
});
