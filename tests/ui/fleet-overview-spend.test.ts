import { Agent, Engine, OpenAIChatModel, parseModelPrices, Registry, tool } from '@cairn/engine';
import { startFakeOpenAIServer, toolResults, type FakeOpenAIServer } from '@cairn/engine/testing';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { z } from 'zod';
import { openTestStore, type TestStore } from '../helpers/test-store.js';

// The overview's spend by tenant and model today, from real commits of priced model responses
// (the openai adapter against a local server that reports usage), against the runs' own usage.

let t: TestStore;
let server: FakeOpenAIServer;
beforeEach(async () => {
  t = await openTestStore();
  // Two pings, then an answer: three model requests per run.
  server = await startFakeOpenAIServer({
    decide: ({ messages }) =>
      toolResults(messages).length < 2
        ? { toolCalls: [{ name: 'ping', arguments: {} }] }
        : { text: `pinged ${toolResults(messages).length} times` },
  });
});
afterEach(async () => {
  await server?.close();
  await t?.close();
});

const PRICES = parseModelPrices(
  {
    'openai-chat:gpt-a': { input_per_mtok: 1000, output_per_mtok: 2000 },
    'openai-chat:gpt-b': { input_per_mtok: 300, output_per_mtok: 500 },
  },
  'test',
);
const ping = tool({
  name: 'ping',
  description: 'Answers pong',
  parameters: z.object({}),
  execute: () => 'pong',
});

it("splits each tenant's spend today by model, each model's the sum of its runs' cost of that model, for an admin and a tenant's scope", async () => {
  const agent = (name: string, model: string) =>
    new Agent({
      name,
      model: new OpenAIChatModel({ model, apiKey: 'k', baseURL: server.url }),
      tools: [ping],
    });
  const registry = new Registry({ agents: [agent('on-a', 'gpt-a'), agent('on-b', 'gpt-b')] });
  const engine = new Engine({ store: t.store, registry, prices: PRICES });
  const runs: { tenant: string | null; runId: string }[] = [];
  for (const [tenantId, name] of [
    ['acme', 'on-a'],
    ['acme', 'on-b'],
    ['acme', 'on-b'],
    ['globex', 'on-b'],
    [null, 'on-a'],
  ] as const) {
    const run = await engine.createRun({
      entity: { kind: 'agent', name },
      input: 'ping',
      tenantId,
    });
    const done = await engine.execute(run.runId, { reason: 'run' });
    expect(done.outcome === 'finished' && done.run.status).toBe('COMPLETED');
    runs.push({ tenant: tenantId, runId: run.runId });
  }
  // What each tenant's runs cost per model, as their run views say.
  const expected = new Map<string, Map<string, number>>();
  for (const { tenant, runId } of runs) {
    if (tenant === null) continue;
    const view = (await t.store.getRunView(runId))!;
    const models = expected.get(tenant) ?? new Map<string, number>();
    for (const [model, line] of Object.entries(view.usage.by_model)) {
      expect(line.cost_usd).toBeGreaterThan(0);
      models.set(model, (models.get(model) ?? 0) + Math.round(line.cost_usd * 1e6));
    }
    expected.set(tenant, models);
  }
  const micro = (usd: number) => Math.round(usd * 1e6);

  const overview = await t.store.readFleetOverview({});
  expect(overview.spendToday.map((s) => s.tenant).sort()).toEqual(['acme', 'globex']);
  for (const spend of overview.spendToday) {
    const models = expected.get(spend.tenant)!;
    expect(
      Object.fromEntries(spend.byModel.map((m) => [m.model, micro(m.costUsd)])),
      spend.tenant,
    ).toEqual(Object.fromEntries(models));
    // The model ledger and the tenant ledger count the same commits.
    expect(micro(spend.costUsd)).toBe([...models.values()].reduce((a, b) => a + b, 0));
  }
  expect(overview.spendToday.find((s) => s.tenant === 'acme')!.byModel.map((m) => m.model)).toEqual(
    // Most first.
    [...expected.get('acme')!.entries()].sort((a, b) => b[1] - a[1]).map(([model]) => model),
  );

  const acme = await t.store.readFleetOverview({ tenantId: 'acme' });
  expect(acme.spendToday.map((s) => s.tenant)).toEqual(['acme']);
  expect(acme.spendToday[0]!.byModel.length).toBe(2);
});
