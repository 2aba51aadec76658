import { afterEach, describe, expect, it } from 'vitest';
import {
  Agent,
  CapExceededError,
  digestArgs,
  Registry,
  UserError,
  type NewPendingAction,
} from '@cairn/engine';
import { ScriptedModel } from '@cairn/engine/testing';
import type { RunView } from '@cairn/store';
import { openProducerFixture, type ProducerFixture } from './test-support/producer-fixture.js';

// Who may decide a budget action, the range of budget limits, and entity caps, through the HTTP API.

let fx: ProducerFixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

const ADMIN = 'admin-key';
const INITECH = 'initech-key';

/** An agent whose `budget` and `maxDurationMs` are defaults, and whose `caps` no request may pass. */
const capped = new Agent({
  name: 'capped',
  model: new ScriptedModel({ decide: () => ({ text: 'ok' }) }),
  budget: { maxCostUsd: 1 },
  maxDurationMs: 60_000,
  caps: { budget: { maxCostUsd: 5, maxTokens: 100_000 }, maxDurationMs: 600_000 },
});

async function open(): Promise<ProducerFixture> {
  fx = await openProducerFixture(
    { apiKeys: [ADMIN, `initech:${INITECH}`] },
    { registry: new Registry({ agents: [capped] }) },
  );
  return fx;
}

async function call(
  path: string,
  apiKey: string,
  body?: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fx!.app.request(path, {
    method: body === undefined ? 'GET' : 'POST',
    headers: {
      Authorization: `Bearer ${apiKey}`,
      ...(body !== undefined && { 'Content-Type': 'application/json' }),
    },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const createCapped = (apiKey: string, body: Record<string, unknown>) =>
  call('/v1/agents/capped/runs', apiKey, { input: 'go', ...body });

const EMPTY = {
  messages: [],
  toolCalls: [],
  usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
};

/** A budget action of `args`, as a worker records it at a budget pause. */
function budgetAction(id: string, args: Record<string, unknown>): NewPendingAction {
  return {
    actionId: id,
    kind: 'budget',
    memberPath: [],
    toolCallId: 'budget:1',
    tool: 'budget',
    args,
    argsDigest: digestArgs(args),
    argsSchema: null,
    batch: 1,
    onTimeout: 'reject',
    expiresAt: null,
  };
}

/** A run of `capped` created by `apiKey`, paused on `action` as a worker leaves it. */
async function pausedOn(apiKey: string, action: NewPendingAction): Promise<string> {
  const created = await createCapped(apiKey, {});
  expect(created.status).toBe(202);
  const runId = created.body.run_id as string;
  const { store } = fx!;
  const { epoch } = await store.claimRun(runId, { workerId: 'test', reason: 'run' });
  await store.finishRun(runId, epoch, {
    status: 'PAUSED',
    content: null,
    error: null,
    delta: EMPTY,
    pendingActions: [action],
  });
  return runId;
}

const view = async (runId: string) =>
  (await call(`/v1/runs/${runId}`, ADMIN)).body as unknown as RunView;

describe('tenant-scope budget actions', () => {
  it("only an admin key decides a tenant's spent day: a tenant key gets a 403 naming why and the action stays pending", async () => {
    await open();
    const args = {
      scope: 'tenant',
      tenant: 'initech',
      day: new Date().toISOString().slice(0, 10),
      spent: { cost_usd: 0.169 },
      budget: { max_cost_usd: 0.01 },
    };
    const runId = await pausedOn(INITECH, budgetAction('act-day', args));

    for (const decision of [{ type: 'approve' }, { type: 'reject' }]) {
      const res = await call(`/v1/runs/${runId}/decisions`, INITECH, {
        decisions: [{ action_id: 'act-day', ...decision }],
      });
      expect(res.status).toBe(403);
      expect(res.body.error).toBe('forbidden');
      expect(res.body.message).toContain('only an admin key may decide it');
      expect(res.body.message).toContain('CAIRN_TENANT_BUDGETS');
    }
    const paused = await view(runId);
    expect(paused.status).toBe('PAUSED');
    expect(paused.pending_actions).toMatchObject([{ action_id: 'act-day', status: 'pending' }]);

    const byAdmin = await call(`/v1/runs/${runId}/decisions`, ADMIN, {
      decisions: [{ action_id: 'act-day', type: 'approve' }],
    });
    expect(byAdmin).toMatchObject({ status: 200, body: { applied: ['act-day'], pending: 0 } });
  });

  it("a tenant key still decides its own run's budget, within its entity's caps; an admin key may raise it past them", async () => {
    await open();
    const args = {
      scope: 'run',
      spent: { tokens: 900, cost_usd: 1.2 },
      budget: { max_tokens: null, max_cost_usd: 1 },
    };
    const runId = await pausedOn(INITECH, budgetAction('act-run', args));

    const over = await call(`/v1/runs/${runId}/decisions`, INITECH, {
      decisions: [{ action_id: 'act-run', type: 'approve', budget: { max_cost_usd: 8 } }],
    });
    expect(over.status).toBe(400);
    expect(over.body.error).toBe('cap_exceeded');
    expect(over.body.message).toContain('budget.max_cost_usd (8)');
    expect(over.body.message).toContain('caps.budget.maxCostUsd');
    expect((await view(runId)).pending_actions).toMatchObject([{ status: 'pending' }]);

    const within = await call(`/v1/runs/${runId}/decisions`, INITECH, {
      decisions: [{ action_id: 'act-run', type: 'approve', budget: { max_cost_usd: 4 } }],
    });
    expect(within).toMatchObject({ status: 200, body: { applied: ['act-run'] } });
    expect((await view(runId)).budget).toMatchObject({ max_cost_usd: 4 });

    const second = await pausedOn(INITECH, budgetAction('act-run-2', args));
    const byAdmin = await call(`/v1/runs/${second}/decisions`, ADMIN, {
      decisions: [{ action_id: 'act-run-2', type: 'approve', budget: { max_cost_usd: 8 } }],
    });
    expect(byAdmin).toMatchObject({ status: 200, body: { applied: ['act-run-2'] } });
    expect((await view(second)).budget).toMatchObject({ max_cost_usd: 8 });
  });
});

describe('budget limits out of range', () => {
  it('a create, or an approval, with a limit below one micro-dollar or above the ceiling is a 400 naming the field', async () => {
    await open();
    for (const [budget, field] of [
      [{ max_cost_usd: 1e303 }, 'budget.max_cost_usd'],
      [{ max_cost_usd: 1e-12 }, 'budget.max_cost_usd'],
      [{ max_cost_usd: 1_000_001 }, 'budget.max_cost_usd'],
      [{ max_tokens: 1e13 }, 'budget.max_tokens'],
    ] as const) {
      const res = await call('/v1/agents/capped/runs', ADMIN, { input: 'go', budget });
      expect(res.status, JSON.stringify(budget)).toBe(400);
      expect(res.body.message).toContain(field);
    }
    const runId = await pausedOn(
      ADMIN,
      budgetAction('act-range', {
        scope: 'run',
        spent: { tokens: 10, cost_usd: 1.2 },
        budget: { max_tokens: null, max_cost_usd: 1 },
      }),
    );
    const raise = await call(`/v1/runs/${runId}/decisions`, ADMIN, {
      decisions: [{ action_id: 'act-range', type: 'approve', budget: { max_cost_usd: 1e303 } }],
    });
    expect(raise.status).toBe(400);
    expect(raise.body.message).toContain('decisions.0.budget.max_cost_usd');
    expect((await view(runId)).budget).toMatchObject({ max_cost_usd: 1 });
  });

  it('engine.createRun (the path of engine.run) refuses the same limits, naming the field', async () => {
    const { client } = await open();
    const entity = { kind: 'agent', name: 'capped' } as const;
    await expect(
      client.engine.createRun({ entity, input: 'go', budget: { maxCostUsd: 1e303 } }),
    ).rejects.toThrow(
      /budget\.max_cost_usd must be from 0\.000001 \(one micro-dollar\) to 1000000 USD/,
    );
    await expect(
      client.engine.createRun({ entity, input: 'go', budget: { maxCostUsd: 1e-12 } }),
    ).rejects.toBeInstanceOf(UserError);
  });
});

describe('entity caps', () => {
  it('a create above a cap is a 400 naming the cap; within them, the request wins; naming none, the defaults apply and the cap fills what they lack', async () => {
    await open();
    const overBudget = await createCapped(INITECH, { budget: { max_cost_usd: 10 } });
    expect(overBudget.status).toBe(400);
    expect(overBudget.body).toMatchObject({ error: 'cap_exceeded' });
    expect(overBudget.body.message).toBe(
      'budget.max_cost_usd (10) is above agent "capped"\'s cap of 5 (caps.budget.maxCostUsd)',
    );
    const overDeadline = await createCapped(ADMIN, { deadline_ms: 600_001 });
    expect(overDeadline.status).toBe(400);
    expect(overDeadline.body.message).toContain('caps.maxDurationMs');

    const asked = await createCapped(INITECH, {
      budget: { max_cost_usd: 5 },
      deadline_ms: 600_000,
    });
    expect(asked.status).toBe(202);
    const askedView = await view(asked.body.run_id as string);
    expect(askedView.budget).toMatchObject({ max_cost_usd: 5, max_tokens: 100_000 });

    const defaults = await createCapped(INITECH, {});
    const defaultsView = await view(defaults.body.run_id as string);
    expect(defaultsView.budget).toMatchObject({ max_cost_usd: 1, max_tokens: 100_000 });
    const run = (await fx!.store.getRun(defaults.body.run_id as string))!;
    expect(run.deadlineAt!.getTime() - run.createdAt.getTime()).toBe(60_000);

    const tokensOnly = await createCapped(INITECH, { budget: { max_tokens: 500 } });
    expect((await view(tokensOnly.body.run_id as string)).budget).toMatchObject({
      max_tokens: 500,
      max_cost_usd: 5,
    });
  });

  it("a continue's or a fork's deadline above the cap is a 400 naming the cap, and the run keeps its deadline", async () => {
    await open();
    const created = await createCapped(INITECH, {});
    const runId = created.body.run_id as string;
    await fx!.fail(runId);
    const before = (await fx!.store.getRun(runId))!.deadlineAt;

    const cont = await call(`/v1/runs/${runId}/continue`, INITECH, { deadline_ms: 3_600_000 });
    expect(cont.status).toBe(400);
    expect(cont.body.message).toContain('deadline_ms (3600000)');
    expect(cont.body.message).toContain('caps.maxDurationMs');
    expect((await fx!.store.getRun(runId))!.deadlineAt).toEqual(before);

    const fork = await call(`/v1/runs/${runId}/fork`, INITECH, { deadline_ms: 3_600_000 });
    expect(fork.status).toBe(400);
    expect(fork.body.message).toContain('caps.maxDurationMs');

    const within = await call(`/v1/runs/${runId}/continue`, INITECH, { deadline_ms: 600_000 });
    expect(within.status).toBe(202);
  });

  it('engine.run holds an entity given in process to its caps', async () => {
    const { client } = await open();
    await expect(
      client.engine.run(capped, 'go', { budget: { maxTokens: 100_001 } }),
    ).rejects.toBeInstanceOf(CapExceededError);
    await expect(client.engine.run(capped, 'go', { deadlineMs: 600_001 })).rejects.toThrow(
      /deadline_ms \(600001\) is above agent "capped"'s cap of 600000 \(caps\.maxDurationMs\)/,
    );
  });
});
