import { describe, expect, it } from 'vitest';
import { Agent } from './agent.js';
import { newRunLimits } from './entity-caps.js';
import { CapExceededError, DecisionForbiddenError, UserError } from './errors.js';
import { digestArgs, type PendingActionRecord } from './hitl/pending-action.js';
import { validateDecision } from './hitl/validate-decision.js';
import { budgetOf } from './spend/budget-option.js';
import { ScriptedModel } from './testing/scripted-model.js';
import { Team } from './team.js';

const model = new ScriptedModel({ decide: () => ({ text: 'ok' }) });

describe('budget limits', () => {
  it('refuses a limit below one micro-dollar or above the ceiling, naming the field, instead of storing $0', () => {
    expect(() => budgetOf({ maxCostUsd: 1e303 }, 'budget')).toThrow(
      'budget.max_cost_usd must be from 0.000001 (one micro-dollar) to 1000000 USD, got 1e+303',
    );
    expect(() => budgetOf({ maxCostUsd: 1e-12 }, 'budget')).toThrow(/budget\.max_cost_usd/);
    expect(() => budgetOf({ maxTokens: 1e13 }, 'budget')).toThrow(
      'budget.max_tokens must be a whole number of tokens from 1 to 1000000000000, got 10000000000000',
    );
    expect(budgetOf({ maxCostUsd: 0.000001, maxTokens: 1e12 }, 'budget')).toEqual({
      maxCostMicroUsd: 1,
      maxTokens: 1e12,
    });
  });
});

describe('entity caps', () => {
  it('are checked with the definition: in range, and never below the defaults they sit beside', () => {
    expect(
      () =>
        new Agent({
          name: 'a',
          model,
          budget: { maxCostUsd: 6 },
          caps: { budget: { maxCostUsd: 5 } },
        }),
    ).toThrow('agent "a": budget.maxCostUsd (6) is above caps.budget.maxCostUsd (5)');
    expect(
      () =>
        new Team({
          name: 't',
          model,
          members: [new Agent({ name: 'm', model })],
          maxDurationMs: 2000,
          caps: { maxDurationMs: 1000 },
        }),
    ).toThrow('team "t": maxDurationMs (2000) is above caps.maxDurationMs (1000)');
    expect(() => new Agent({ name: 'a', model, caps: { budget: { maxCostUsd: 1e303 } } })).toThrow(
      /agent "a": caps\.budget\.max_cost_usd must be from/,
    );
    expect(() => new Agent({ name: 'a', model, caps: { maxDurationMs: 0 } })).toThrow(UserError);
  });

  it('give a new run what it asks for within them, else the defaults, with what the defaults lack filled from the caps', () => {
    const agent = new Agent({
      name: 'a',
      model,
      budget: { maxTokens: 100, decisionTimeoutMs: 5000 },
      caps: { budget: { maxTokens: 1000, maxCostUsd: 2 }, maxDurationMs: 60_000 },
    });
    const entity = { ...agent, kind: 'agent' as const };
    expect(newRunLimits(entity, {})).toEqual({
      deadlineMs: 60_000,
      budget: { maxTokens: 100, maxCostMicroUsd: 2_000_000, decisionTimeoutMs: 5000 },
    });
    expect(
      newRunLimits(entity, { budget: { maxCostMicroUsd: 500_000 }, deadlineMs: 1000 }),
    ).toEqual({
      deadlineMs: 1000,
      budget: { maxTokens: 1000, maxCostMicroUsd: 500_000 },
    });
    expect(() => newRunLimits(entity, { budget: { maxTokens: 1001 } })).toThrow(CapExceededError);
    expect(() => newRunLimits(entity, { deadlineMs: 60_001 })).toThrow(
      'deadline_ms (60001) is above agent "a"\'s cap of 60000 (caps.maxDurationMs)',
    );
  });
});

describe('who may decide a budget action', () => {
  const action = (args: Record<string, unknown>): PendingActionRecord =>
    ({
      actionId: 'act-1',
      runId: 'run-1',
      kind: 'budget',
      tool: 'budget',
      args,
      argsDigest: digestArgs(args),
      argsSchema: null,
    }) as PendingActionRecord;
  const tenantDay = action({
    scope: 'tenant',
    tenant: 'initech',
    day: '2026-12-03',
    spent: { cost_usd: 0.169 },
    budget: { max_cost_usd: 0.01 },
  });
  const ownBudget = action({
    scope: 'run',
    spent: { tokens: 10, cost_usd: 1.5 },
    budget: { max_tokens: null, max_cost_usd: 1 },
  });
  const rootEntity = {
    kind: 'agent' as const,
    name: 'a',
    caps: { budget: { maxCostMicroUsd: 2_000_000 } },
  };

  it("a tenant's spent day: an admin key only (a tenant key is refused naming why, approve or reject)", () => {
    for (const decision of [{ type: 'approve' }, { type: 'reject' }] as const)
      expect(() => validateDecision(tenantDay, decision, { tenantId: 'initech' })).toThrow(
        DecisionForbiddenError,
      );
    expect(() =>
      validateDecision(tenantDay, { type: 'approve' }, { tenantId: null }),
    ).not.toThrow();
    expect(() => validateDecision(tenantDay, { type: 'approve' })).not.toThrow();
  });

  it("a run's own budget: a tenant key raises it within its root entity's caps, an admin key past them too", () => {
    const over = { type: 'approve', budget: { maxCostUsd: 3 } } as const;
    expect(() => validateDecision(ownBudget, over, { tenantId: 'initech', rootEntity })).toThrow(
      'budget.max_cost_usd (3) is above agent "a"\'s cap of 2 (caps.budget.maxCostUsd); only an admin key may raise a budget past its cap',
    );
    expect(() =>
      validateDecision(
        ownBudget,
        { type: 'approve', budget: { maxCostUsd: 2 } },
        { tenantId: 'initech', rootEntity },
      ),
    ).not.toThrow();
    expect(() => validateDecision(ownBudget, over, { tenantId: null, rootEntity })).not.toThrow();
  });
});
