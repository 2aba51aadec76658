import {
  Agent,
  Engine,
  OpenAIChatModel,
  parseModelPrices,
  Registry,
  tool,
  type Permit,
} from '@cairn/engine';
import { startFakeOpenAIServer, toolResults, type FakeOpenAIServer } from '@cairn/engine/testing';
import { testDatabase, type TestDatabase } from '@cairn/services';
import { createDb, migrate, PostgresCheckpointStore, type RunView } from '@cairn/store';
import { afterEach, expect, it } from 'vitest';
import { z } from 'zod';
import { createInlineExecutor } from '../execution/inline-executor.js';
import { CairnMetrics } from './cairn-metrics.js';

// The model capacity metrics of a worker, from a real run on the Postgres limiter against a
// fake OpenAI server whose quota answers a real 429; its spend metrics, from real runs with prices.

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

it("a scrape shows each model's tokens by tenant and kind, and their cost in USD, equal to the runs' usage", async () => {
  database = await testDatabase();
  db = createDb(database.url);
  await migrate(db);
  const store = new PostgresCheckpointStore(db);
  server = await startFakeOpenAIServer();
  // Two runs of two turns each, the provider reporting cached input on every turn.
  server.enqueue(
    {
      kind: 'tool_calls',
      calls: [{ name: 'ping', arguments: {} }],
      usage: { input: 1000, cached: 400, output: 50 },
    },
    { kind: 'text', text: 'pong seen', usage: { input: 1200, cached: 1000, output: 20 } },
    {
      kind: 'tool_calls',
      calls: [{ name: 'ping', arguments: {} }],
      usage: { input: 300, cached: 0, output: 10 },
    },
    { kind: 'text', text: 'pong seen', usage: { input: 350, cached: 300, output: 5 } },
  );
  const model = new OpenAIChatModel({ model: MODEL_ID, apiKey: 'test-key', baseURL: server.url });
  const ping = tool({
    name: 'ping',
    description: 'Answers pong',
    parameters: z.object({}),
    execute: () => 'pong',
  });
  const registry = new Registry({ agents: [new Agent({ name: 'pinger', model, tools: [ping] })] });
  const metrics = new CairnMetrics();
  const executor = createInlineExecutor({
    store,
    registry,
    workerId: 'w',
    prices: parseModelPrices(
      {
        'openai-chat:gpt-*': { input_per_mtok: 2, cached_input_per_mtok: 0.5, output_per_mtok: 8 },
      },
      'test',
    ),
    observe: (observation) => metrics.observe(observation),
  });
  const engine = new Engine({ store, registry });
  const views = new Map<string, RunView>();
  for (const tenantId of ['acme', null]) {
    const run = await engine.createRun({
      entity: { kind: 'agent', name: 'pinger' },
      input: 'ping please',
      tenantId,
    });
    const outcome = await executor.execute({
      work: { job: 'run', runId: run.runId, attemptsStarted: 1 },
    }).outcome;
    expect(outcome).toMatchObject({ kind: 'finished', status: 'COMPLETED' });
    views.set(tenantId ?? '', (await store.getRunView(run.runId))!);
  }
  await executor.close();

  const samples = await scrape(metrics);
  for (const [tenant, view] of views) {
    const tokens = (kind: string) =>
      samples.get(`cairn_model_tokens_total{model="${MODEL}",tenant="${tenant}",kind="${kind}"}`);
    expect(tokens('input')).toBe(view.usage.input_tokens);
    expect(tokens('cached_input')).toBe(view.usage.cached_input_tokens);
    expect(tokens('output')).toBe(view.usage.output_tokens);
    expect(
      samples.get(`cairn_model_cost_usd_total{model="${MODEL}",tenant="${tenant}"}`),
    ).toBeCloseTo(view.usage.cost_usd, 12);
  }
  // What the provider reported, at the prices: acme's 2,200 input tokens (1,400 of them cached) and 70 output.
  expect(views.get('acme')!.usage).toMatchObject({
    input_tokens: 2200,
    cached_input_tokens: 1400,
    output_tokens: 70,
    cost_usd: (800 * 2 + 1400 * 0.5 + 70 * 8) / 1_000_000,
  });
  expect(views.get('')!.usage.cost_usd).toBe((350 * 2 + 300 * 0.5 + 15 * 8) / 1_000_000);
  // Only those two tenants' series: a series per model, tenant and kind.
  expect(
    [...samples.keys()].filter((key) => key.startsWith('cairn_model_cost_usd_total')).sort(),
  ).toEqual([
    `cairn_model_cost_usd_total{model="${MODEL}",tenant=""}`,
    `cairn_model_cost_usd_total{model="${MODEL}",tenant="acme"}`,
  ]);
});
