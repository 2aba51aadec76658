import { describe, expect, it } from 'vitest';
import {
  parseTenantBudgets,
  spentTenantDay,
  TenantSpendLedger,
  type TenantDaySpend,
} from './tenant-budget.js';

/** A store's view of tenants' days: what `read` answers, and how often it was asked. */
function fleetDays(initial: Record<string, number>) {
  const costs = new Map(Object.entries(initial));
  let day = '2026-12-02';
  let reads = 0;
  return {
    reads: () => reads,
    commit: (tenant: string, microUsd: number) =>
      costs.set(tenant, (costs.get(tenant) ?? 0) + microUsd),
    nextDay: () => {
      day = '2026-12-03';
      costs.clear();
    },
    read: (tenant: string): Promise<TenantDaySpend> => {
      reads += 1;
      return Promise.resolve({ day, costMicroUsd: costs.get(tenant) ?? 0, secondsToNextDay: 60 });
    },
  };
}

describe('TenantSpendLedger', () => {
  it("reads a tenant's day at most once per refresh, counting this worker's responses meanwhile and others' after the next read", async () => {
    const fleet = fleetDays({ acme: 4_000_000 });
    let now = 0;
    const ledger = new TenantSpendLedger(fleet.read, 2000, () => now);
    const hold = { tenantId: 'acme', maxMicroUsd: 5_000_000, ledger, exemptDay: null };

    // Many requests, one read; another worker's commit is not seen until the refresh.
    await Promise.all([spentTenantDay(hold), spentTenantDay(hold), spentTenantDay(hold)]);
    fleet.commit('acme', 600_000);
    expect(await spentTenantDay(hold)).toBeUndefined();
    expect(fleet.reads()).toBe(1);

    // This worker's own response counts at once.
    ledger.add('acme', 1_000_000);
    expect(await spentTenantDay(hold)).toEqual({
      scope: 'tenant',
      tenant: 'acme',
      day: '2026-12-02',
      spent: { cost_usd: 5 },
      budget: { max_cost_usd: 5 },
    });

    // After the refresh the store's count replaces the local one (its commit is in it).
    fleet.commit('acme', 1_000_000);
    now = 2000;
    expect((await spentTenantDay(hold))?.spent.cost_usd).toBe(5.6);
    expect(fleet.reads()).toBe(2);

    // An exemption holds for its day only; the next UTC day starts from nothing.
    expect(await spentTenantDay({ ...hold, exemptDay: '2026-12-02' })).toBeUndefined();
    fleet.nextDay();
    now = 60_000;
    expect(await spentTenantDay(hold)).toBeUndefined();
  });
});

describe('parseTenantBudgets', () => {
  it('reads USD per UTC day by tenant and names a malformed entry', () => {
    expect(parseTenantBudgets('acme:25, globex:0.5,', 'CAIRN_TENANT_BUDGETS')).toEqual({
      acme: 25,
      globex: 0.5,
    });
    expect(() => parseTenantBudgets('acme:25,globex:-1', 'X')).toThrow(
      /^X: entry 1 \("globex:-1"\) must be <tenant>:<USD per UTC day above 0>, e.g. acme:25$/,
    );
  });
});
