import { TenantBudgetExhaustedError, UserError } from '../errors.js';
import { usdOf } from './run-usage.js';

/** USD each tenant may spend per UTC day, counted fleet-wide (`CAIRN_TENANT_BUDGETS=acme:25,globex:5`). */
export type TenantBudgets = Readonly<Record<string, number>>;

/** A tenant's spend on the current UTC day, by the database's clock. */
export interface TenantDaySpend {
  /** The UTC day, `YYYY-MM-DD`. */
  day: string;
  /** What the tenant's runs committed on that day, in integer micro-dollars. */
  costMicroUsd: number;
  /** Whole seconds until the next UTC day begins (at least 1): a refused creation's `Retry-After`. */
  secondsToNextDay: number;
}

/** How long a worker uses a tenant's day spend it read before reading it again. */
export const TENANT_SPEND_REFRESH_MS = 2000;

/**
 * Parses `CAIRN_TENANT_BUDGETS` (`acme:25,globex:5`: USD per UTC day by
 * tenant). Throws a {@link UserError} naming `source` and the entry.
 */
export function parseTenantBudgets(raw: string, source: string): TenantBudgets {
  const budgets: Record<string, number> = {};
  for (const [index, entry] of raw.split(',').entries()) {
    if (entry.trim() === '') continue;
    const match = /^\s*([^:\s]+)\s*:\s*([0-9]+(?:\.[0-9]+)?)\s*$/.exec(entry);
    const usd = match ? Number(match[2]) : NaN;
    if (!match || !(usd > 0) || !Number.isFinite(usd))
      throw new UserError(
        `${source}: entry ${index} ("${entry.trim()}") must be <tenant>:<USD per UTC day above 0>, e.g. acme:25`,
      );
    if (Object.hasOwn(budgets, match[1]!))
      throw new UserError(`${source}: tenant "${match[1]}" is listed twice`);
    budgets[match[1]!] = usd;
  }
  return budgets;
}

/** The tenant's day budget in micro-dollars, or undefined when it has none (or the run has no tenant). */
export function tenantBudgetOf(
  budgets: TenantBudgets | undefined,
  tenantId: string | null,
): number | undefined {
  if (!budgets || tenantId === null || !Object.hasOwn(budgets, tenantId)) return undefined;
  return Math.round(budgets[tenantId]! * 1_000_000);
}

/** What a tenant budget pause's action shows: whose day it is, what it spent and its budget. */
export interface TenantBudgetActionArgs {
  scope: 'tenant';
  tenant: string;
  /** The UTC day that is spent: an approval lets the run go on until it ends. */
  day: string;
  spent: { cost_usd: number };
  budget: { max_cost_usd: number };
}

/** The action args of a tenant's spent day. */
export function tenantActionArgs(
  tenant: string,
  maxMicroUsd: number,
  today: Pick<TenantDaySpend, 'day' | 'costMicroUsd'>,
): TenantBudgetActionArgs {
  return {
    scope: 'tenant',
    tenant,
    day: today.day,
    spent: { cost_usd: usdOf(today.costMicroUsd) },
    budget: { max_cost_usd: usdOf(maxMicroUsd) },
  };
}

interface LedgerEntry {
  read: TenantDaySpend;
  /** When it was read (ms, the ledger's clock). */
  readAt: number;
  /** What this worker's responses cost since it was read (committed or not). */
  local: number;
}

/**
 * A worker's view of its tenants' day spend, counted fleet-wide in Postgres:
 * read at most every `refreshMs` per tenant (and at the turn of the UTC
 * day), with what this worker's own responses cost since added at once, so
 * a model request costs no round trip. Another worker's spend shows within
 * `refreshMs` of its commit.
 */
export class TenantSpendLedger {
  private readonly entries = new Map<string, LedgerEntry>();
  private readonly reads = new Map<string, Promise<LedgerEntry>>();

  constructor(
    private readonly read: (tenantId: string) => Promise<TenantDaySpend>,
    private readonly refreshMs = TENANT_SPEND_REFRESH_MS,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** The tenant's spend today as this worker knows it; reads it when the last read is older than `refreshMs`. */
  async today(tenantId: string): Promise<Pick<TenantDaySpend, 'day' | 'costMicroUsd'>> {
    let entry = this.entries.get(tenantId);
    if (!entry || this.isStale(entry)) entry = await this.refresh(tenantId);
    return { day: entry.read.day, costMicroUsd: entry.read.costMicroUsd + entry.local };
  }

  /** Adds what a response of one of the tenant's runs cost (in this worker) until the next read counts it. */
  add(tenantId: string, microUsd: number): void {
    const entry = this.entries.get(tenantId);
    if (entry && microUsd > 0) entry.local += microUsd;
  }

  private isStale(entry: LedgerEntry): boolean {
    const age = this.now() - entry.readAt;
    return age >= this.refreshMs || age >= entry.read.secondsToNextDay * 1000;
  }

  /** One read per tenant at a time; concurrent callers share it. */
  private refresh(tenantId: string): Promise<LedgerEntry> {
    let reading = this.reads.get(tenantId);
    if (!reading) {
      const readAt = this.now();
      reading = this.read(tenantId)
        .then((read) => {
          const entry = { read, readAt, local: 0 };
          this.entries.set(tenantId, entry);
          return entry;
        })
        .finally(() => this.reads.delete(tenantId));
      this.reads.set(tenantId, reading);
    }
    return reading;
  }
}

/** A tree held to its tenant's day budget: the tenant, its budget, the worker's ledger and the day an approval exempts it for. */
export interface TenantHold {
  tenantId: string;
  maxMicroUsd: number;
  ledger: TenantSpendLedger;
  /** The UTC day a person let this tree go on past its tenant's budget (null: none). */
  exemptDay: string | null;
}

/**
 * The tenant's day, when it is spent and the tree is not exempt for it: what
 * the budget action shows. Costs no round trip unless the ledger's read of
 * the tenant is stale.
 */
export async function spentTenantDay(
  hold: TenantHold,
): Promise<TenantBudgetActionArgs | undefined> {
  const today = await hold.ledger.today(hold.tenantId);
  if (today.day === hold.exemptDay || today.costMicroUsd < hold.maxMicroUsd) return undefined;
  return tenantActionArgs(hold.tenantId, hold.maxMicroUsd, today);
}

/**
 * Refuses a new run of a tenant whose day is spent ({@link TenantBudgetExhaustedError},
 * naming when the next UTC day begins): one read of the tenant's day, only
 * for a tenant with a budget.
 */
export async function assertTenantDayOpen(
  readDay: (tenantId: string) => Promise<TenantDaySpend>,
  budgets: TenantBudgets | undefined,
  tenantId: string | null,
): Promise<void> {
  const maxMicroUsd = tenantBudgetOf(budgets, tenantId);
  if (maxMicroUsd === undefined || tenantId === null) return;
  const today = await readDay(tenantId);
  if (today.costMicroUsd < maxMicroUsd) return;
  throw new TenantBudgetExhaustedError(
    tenantId,
    today.day,
    usdOf(today.costMicroUsd),
    usdOf(maxMicroUsd),
    today.secondsToNextDay,
  );
}
