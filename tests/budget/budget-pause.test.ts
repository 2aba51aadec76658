import {
  Agent,
  BudgetExceededError,
  Engine,
  InvalidDecisionError,
  OpenAIChatModel,
  parseModelPrices,
  Registry,
  Team,
  tool,
  type PostedDecision,
} from '@cairn/engine';
import { startFakeOpenAIServer, toolResults, type FakeOpenAIServer } from '@cairn/engine/testing';
import { validateDecision } from '@cairn/engine/store';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { openTestStore, type TestStore } from '../helpers/test-store.js';

// Budgets, on the real store and the openai adapter against a local server that reports usage.

let t: TestStore;
let server: FakeOpenAIServer;
beforeEach(async () => {
  t = await openTestStore();
  // Three pings, then an answer: four model requests.
  server = await startFakeOpenAIServer({
    // No limits: the quota's ledger is the provider's bill of each model's tokens.
    quota: { perModel: { 'gpt-b': {}, 'gpt-lead': {} } },
    decide: ({ messages, tools }) => {
      if (tools.some((t) => t.name === 'delegate_task_to_member'))
        return toolResults(messages).length === 0
          ? {
              toolCalls: [
                { name: 'delegate_task_to_member', arguments: { member: 'worker', task: 'ping' } },
              ],
            }
          : { text: 'crew done' };
      return toolResults(messages).length < 3
        ? { toolCalls: [{ name: 'ping', arguments: {} }] }
        : { text: `pinged ${toolResults(messages).length} times` };
    },
  });
});
afterEach(async () => {
  await server.close();
  await t.close();
});

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

function engineFor(entities: { agents?: Agent[]; teams?: Team[] }): Engine {
  return new Engine({ store: t.store, registry: new Registry(entities), prices: PRICES });
}

function pinger(name = 'pinger'): Agent {
  const model = new OpenAIChatModel({ model: 'gpt-b', apiKey: 'k', baseURL: server.url });
  return new Agent({ name, model, tools: [ping] });
}

/** Decides as `POST /v1/runs/:id/decisions` does: validated, recorded once, the root resumed. */
function decide(runId: string, ...decisions: PostedDecision[]) {
  return t.store.decideActions(runId, decisions, validateDecision);
}

describe('a run with a budget', () => {
  it('pauses before the request that would pass it, with what it spent; a raised budget resumes it to the end', async () => {
    const engine = engineFor({ agents: [pinger()] });
    const run = await engine.createRun({
      entity: { kind: 'agent', name: 'pinger' },
      input: 'ping three times',
      budget: { maxTokens: 1 },
    });
    const first = await engine.execute(run.runId, { reason: 'run' });
    expect(first.outcome === 'finished' && first.run.status).toBe('PAUSED');
    const paused = (await t.store.getRunView(run.runId))!;
    expect(paused.pending_actions).toHaveLength(1);
    const [action] = paused.pending_actions;
    expect(action).toMatchObject({ kind: 'budget', tool: 'budget', member_path: ['pinger'] });
    // Nothing was asked of the model: the budget is checked before the first request.
    expect(server.requests).toHaveLength(0);
    expect(action!.args).toEqual({
      scope: 'run',
      spent: { tokens: 0, cost_usd: 0 },
      budget: { max_tokens: 1, max_cost_usd: null },
    });

    const decided = await decide(run.runId, {
      actionId: action!.action_id,
      decision: { type: 'approve', budget: { maxTokens: 1_000_000, maxCostUsd: 5 } },
    });
    expect(decided.resume?.rootRunId).toBe(run.runId);
    const resumed = await engine.execute(run.runId, { reason: 'continue', from: ['PAUSED'] });
    expect(resumed.outcome === 'finished' && resumed.run.status).toBe('COMPLETED');
    const done = (await t.store.getRunView(run.runId))!;
    expect(done.content).toBe('pinged 3 times');
    expect(done.budget).toEqual({
      max_tokens: 1_000_000,
      max_cost_usd: 5,
      decision_timeout_ms: null,
    });
    // Exactly what the provider billed, costed at 1,000 USD per million tokens (1,000 micro-dollars a token).
    expect(server.requests).toHaveLength(4);
    expect(done.usage.total_tokens).toBe(server.quota.tokens('gpt-b'));
    expect(done.usage.cost_usd).toBeCloseTo(done.usage.total_tokens / 1000, 6);
    expect(done.usage.by_model['openai-chat:gpt-b']!.input_tokens).toBe(done.usage.input_tokens);
  });

  it('refuses a raise that is not above what was spent, and ends the run in ERROR when a person rejects', async () => {
    const engine = engineFor({ agents: [pinger()] });
    const run = await engine.createRun({
      entity: { kind: 'agent', name: 'pinger' },
      input: 'ping three times',
      budget: { maxCostUsd: 0.000001 },
    });
    const first = await engine.execute(run.runId, { reason: 'run' });
    expect(first.outcome === 'finished' && first.run.status).toBe('PAUSED');
    const [action] = (await t.store.getRunView(run.runId))!.pending_actions;

    // Not above what was spent: refused, nothing recorded.
    await expect(
      decide(run.runId, {
        actionId: action!.action_id,
        decision: { type: 'approve', budget: { maxCostUsd: 0.0000001 } },
      }),
    ).rejects.toThrow(InvalidDecisionError);
    await expect(
      decide(run.runId, { actionId: action!.action_id, decision: { type: 'approve' } }),
    ).rejects.toThrow(/decide approve with a raised budget/);
    expect((await t.store.getRunView(run.runId))!.pending_actions).toHaveLength(1);

    await decide(run.runId, {
      actionId: action!.action_id,
      decision: { type: 'reject', message: 'too expensive' },
    });
    const ended = await engine.execute(run.runId, { reason: 'continue', from: ['PAUSED'] });
    expect(ended.outcome === 'finished' && ended.run.status).toBe('ERROR');
    const view = (await t.store.getRunView(run.runId))!;
    expect(view.error).toMatchObject({ name: BudgetExceededError.name });
    expect(view.error!.message).toContain('too expensive');
  });

  it("holds a team's member runs to the team's budget: the member pauses, the team with it, and the tree's usage adds up", async () => {
    const team = new Team({
      name: 'crew',
      model: new OpenAIChatModel({ model: 'gpt-lead', apiKey: 'k', baseURL: server.url }),
      members: [pinger('worker')],
    });
    const engine = engineFor({ teams: [team] });
    const run = await engine.createRun({
      entity: { kind: 'team', name: 'crew' },
      input: 'get it pinged',
      budget: { maxCostUsd: 0.2 },
    });
    const first = await engine.execute(run.runId, { reason: 'run' });
    expect(first.outcome === 'finished' && first.run.status).toBe('PAUSED');
    const paused = (await t.store.getRunView(run.runId))!;
    const [action] = paused.pending_actions;
    // The member's request would pass the team's budget: its action, listed on the team.
    expect(action).toMatchObject({ kind: 'budget', member_path: ['crew', 'worker'] });
    expect(paused.member_runs[0]!.status).toBe('PAUSED');
    // What the tree spent so far: the team's delegation turn (its lead model has no price).
    const { spent } = action!.args as { spent: { tokens: number; cost_usd: number } };
    expect(spent.tokens).toBeGreaterThan(0);
    expect(spent.tokens).toBe(paused.usage_total.total_tokens);
    expect(spent.cost_usd).toBe(paused.usage_total.cost_usd);

    await decide(run.runId, {
      actionId: action!.action_id,
      decision: { type: 'approve', budget: { maxCostUsd: 100 } },
    });
    const resumed = await engine.execute(run.runId, { reason: 'continue', from: ['PAUSED'] });
    expect(resumed.outcome === 'finished' && resumed.run.status).toBe('COMPLETED');
    const done = (await t.store.getRunView(run.runId))!;
    expect(done.content).toBe('crew done');
    expect(done.usage_total.total_tokens).toBe(
      server.quota.tokens('gpt-b') + server.quota.tokens('gpt-lead'),
    );
    expect(done.usage_total.by_model['openai-chat:gpt-b']!.output_tokens).toBe(
      done.member_runs[0]!.usage.output_tokens,
    );
  });

  it('refuses a budget that is not positive, naming the field, before anything is written', async () => {
    const engine = engineFor({ agents: [pinger()] });
    for (const budget of [{ maxTokens: 0 }, { maxCostUsd: -1 }, { maxTokens: 1.5 }, {}]) {
      await expect(
        engine.createRun({ entity: { kind: 'agent', name: 'pinger' }, input: 'x', budget }),
      ).rejects.toThrow(/^budget/);
    }
    expect(await t.store.listRuns({ limit: 10 })).toMatchObject({ runs: [] });
  });
});
