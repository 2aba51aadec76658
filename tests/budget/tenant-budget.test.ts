import {
  Agent,
  BudgetExceededError,
  Engine,
  InvalidDecisionError,
  OpenAIChatModel,
  parseModelPrices,
  Registry,
  TenantBudgetExhaustedError,
  tool,
  type PostedDecision,
  type TenantBudgets,
} from '@cairn/engine';
import { startFakeOpenAIServer, toolResults, type FakeOpenAIServer } from '@cairn/engine/testing';
import { validateDecision } from '@cairn/engine/store';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { openTestStore, type TestStore } from '../helpers/test-store.js';

// Tenant day budgets on the real store and the openai adapter against a local server that reports
// usage: each engine stands for a worker (its own view of the tenants' day), the store is the fleet's.

let t: TestStore;
let server: FakeOpenAIServer;
beforeEach(async () => {
  t = await openTestStore();
  // Three pings, then an answer: four model requests.
  server = await startFakeOpenAIServer({
    quota: { perModel: { 'gpt-b': {} } },
    decide: ({ messages }) =>
      toolResults(messages).length < 3
        ? { toolCalls: [{ name: 'ping', arguments: {} }] }
        : { text: `pinged ${toolResults(messages).length} times` },
  });
});
afterEach(async () => {
  await server.close();
  await t.close();
});

/** 1,000 USD per million tokens: a request of a few hundred tokens costs some tenths of a dollar. */
const PRICES = parseModelPrices(
  { 'openai-chat:gpt-b': { input_per_mtok: 1000, output_per_mtok: 1000 } },
  'test',
);
const ping = tool({
  name: 'ping',
  description: 'Answers pong',
  parameters: z.object({}),
  execute: () => 'pong',
});
const PINGER = { kind: 'agent', name: 'pinger' } as const;

function engineFor(tenantBudgets: TenantBudgets): Engine {
  const model = new OpenAIChatModel({ model: 'gpt-b', apiKey: 'k', baseURL: server.url });
  const registry = new Registry({ agents: [new Agent({ name: 'pinger', model, tools: [ping] })] });
  return new Engine({ store: t.store, registry, prices: PRICES, tenantBudgets });
}

function decide(runId: string, ...decisions: PostedDecision[]) {
  return t.store.decideActions(runId, decisions, validateDecision);
}

/** Today, UTC, as the store names days. */
function utcToday(): string {
  return new Date().toISOString().slice(0, 10);
}

const micro = (usd: number) => Math.round(usd * 1_000_000);

describe('tenant day budgets', () => {
  it("counts each tenant's spend of the UTC day from its runs' commits, to the micro-dollar; a run without a tenant counts for none", async () => {
    const engine = engineFor({ acme: 1000, globex: 1000 });
    const runs = [];
    for (const tenantId of ['acme', 'acme', 'globex', null]) {
      const run = await engine.createRun({ entity: PINGER, input: 'ping', tenantId });
      const done = await engine.execute(run.runId, { reason: 'run' });
      expect(done.outcome === 'finished' && done.run.status).toBe('COMPLETED');
      runs.push((await t.store.getRunView(run.runId))!);
    }
    // Every request was billed and costed: the runs' cost is the provider's bill at the price.
    const costs = runs.map((r) => micro(r.usage.cost_usd));
    expect(costs.reduce((a, b) => a + b)).toBe(server.quota.tokens('gpt-b') * 1000);

    const acme = await t.store.tenantDaySpend('acme');
    expect(acme.day).toBe(utcToday());
    expect(acme.costMicroUsd).toBe(costs[0]! + costs[1]!);
    expect((await t.store.tenantDaySpend('globex')).costMicroUsd).toBe(costs[2]);
    expect((await t.store.tenantDaySpend('initech')).costMicroUsd).toBe(0);
    expect(acme.secondsToNextDay).toBeGreaterThan(0);
    expect(acme.secondsToNextDay).toBeLessThanOrEqual(86_400);
  });

  it("pauses a running run once its tenant's day is spent, refuses the tenant's new runs, and lets an approved run go on for the rest of the day", async () => {
    const worker = engineFor({ acme: 0.3 });
    const first = await worker.createRun({ entity: PINGER, input: 'ping', tenantId: 'acme' });
    const second = await worker.createRun({ entity: PINGER, input: 'ping', tenantId: 'acme' });
    const globex = await worker.createRun({ entity: PINGER, input: 'ping', tenantId: 'globex' });

    const paused = await worker.execute(first.runId, { reason: 'run' });
    expect(paused.outcome === 'finished' && paused.run.status).toBe('PAUSED');
    const view = (await t.store.getRunView(first.runId))!;
    const [action] = view.pending_actions;
    const spent = await t.store.tenantDaySpend('acme');
    // It stopped before the request after the one that spent the day: everything it spent is counted.
    expect(spent.costMicroUsd).toBeGreaterThanOrEqual(micro(0.3));
    expect(spent.costMicroUsd).toBe(micro(view.usage.cost_usd));
    expect(server.requests.length).toBeLessThan(4);
    expect(action).toMatchObject({ kind: 'budget', member_path: ['pinger'] });
    expect(action!.args).toEqual({
      scope: 'tenant',
      tenant: 'acme',
      day: utcToday(),
      spent: { cost_usd: view.usage.cost_usd },
      budget: { max_cost_usd: 0.3 },
    });

    // The tenant's new runs are refused until the next UTC day; another tenant's are not.
    const refused = await worker
      .createRun({ entity: PINGER, input: 'ping', tenantId: 'acme' })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(TenantBudgetExhaustedError);
    expect(refused).toMatchObject({ tenantId: 'acme', day: utcToday(), budgetUsd: 0.3 });
    // Retry-After: the seconds until the next UTC day (the database's clock is this machine's).
    const untilTomorrow = (Date.parse(`${utcToday()}T00:00:00Z`) + 86_400_000 - Date.now()) / 1000;
    expect(
      Math.abs((refused as TenantBudgetExhaustedError).retryAfterS - untilTomorrow),
    ).toBeLessThan(2);
    const other = await worker.execute(globex.runId, { reason: 'run' });
    expect(other.outcome === 'finished' && other.run.status).toBe('COMPLETED');

    // Another worker learns the tenant's day from the store: the second run pauses before its first request.
    const requests = server.requests.length;
    const otherWorker = engineFor({ acme: 0.3 });
    const held = await otherWorker.execute(second.runId, { reason: 'run' });
    expect(held.outcome === 'finished' && held.run.status).toBe('PAUSED');
    expect(server.requests).toHaveLength(requests);

    // A tenant's day is not raised by a decision; an approval lets the run go on, a rejection ends it.
    await expect(
      decide(first.runId, {
        actionId: action!.action_id,
        decision: { type: 'approve', budget: { maxCostUsd: 10 } },
      }),
    ).rejects.toThrow(InvalidDecisionError);
    await decide(first.runId, { actionId: action!.action_id, decision: { type: 'approve' } });
    const resumed = await worker.execute(first.runId, { reason: 'continue', from: ['PAUSED'] });
    expect(resumed.outcome === 'finished' && resumed.run.status).toBe('COMPLETED');
    const done = (await t.store.getRunView(first.runId))!;
    expect(done.content).toBe('pinged 3 times');
    expect(done.pending_actions).toEqual([]);

    const [secondAction] = (await t.store.getRunView(second.runId))!.pending_actions;
    await decide(second.runId, {
      actionId: secondAction!.action_id,
      decision: { type: 'reject', message: 'acme is over for today' },
    });
    const ended = await otherWorker.execute(second.runId, { reason: 'continue', from: ['PAUSED'] });
    expect(ended.outcome === 'finished' && ended.run.status).toBe('ERROR');
    const error = (await t.store.getRunView(second.runId))!.error!;
    expect(error.name).toBe(BudgetExceededError.name);
    expect(error.message).toContain("tenant's day budget is spent");
    expect(error.message).toContain('acme is over for today');

    // The day counts every run of the tenant, the approved one's last requests included.
    const [firstCost, secondCost] = [done, await t.store.getRunView(second.runId)].map((r) =>
      micro(r!.usage.cost_usd),
    );
    expect((await t.store.tenantDaySpend('acme')).costMicroUsd).toBe(firstCost! + secondCost!);
  });

  it('refuses a malformed budget given by code, naming the tenant', () => {
    expect(() => engineFor({ acme: 0 })).toThrow(/^tenantBudgets\.acme must be a positive number/);
    expect(() => engineFor({ acme: Number.NaN })).toThrow(/^tenantBudgets\.acme/);
  });
});
