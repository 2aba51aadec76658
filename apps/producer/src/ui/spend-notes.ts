import { usdOf, type UsageView, type Usage } from '@cairn/engine';
import type { RunView, StoredEvent } from '@cairn/store';
import { html } from 'hono/html';
import type { Html } from './page-layout.js';

/** A token count as people read it: `12,345`. */
export function tokenCount(tokens: number): string {
  return tokens.toLocaleString('en-US');
}

/** A token count with its noun: `1 token`, `12,345 tokens`. */
export function tokensText(tokens: number): string {
  return `${tokenCount(tokens)} token${tokens === 1 ? '' : 's'}`;
}

/** USD to the micro-dollar kept, cents at least: `$0.00286`, `$5.00`. */
export function usd(amount: number): string {
  const [whole, fraction = ''] = amount.toFixed(6).split('.');
  return `$${whole}.${fraction.replace(/0+$/, '').padEnd(2, '0')}`;
}

/** A run's (or tree's) usage in one line: total tokens, their split (cached input when any), and the cost. */
export function usageNote(usage: UsageView): Html {
  const cached = usage.cached_input_tokens;
  const input = `${tokenCount(usage.input_tokens)} in${cached > 0 ? `, ${tokenCount(cached)} of them cached` : ''}`;
  return html`<span
    class="usage-note"
    data-tokens="${usage.total_tokens}"
    data-cost-usd="${usage.cost_usd}"
    >${tokensText(usage.total_tokens)} (${input}, ${tokenCount(usage.output_tokens)} out) ·
    ${usd(usage.cost_usd)}</span
  >`;
}

/** True when two usages count different tokens or cost (a team whose members used models). */
export function usagesDiffer(a: UsageView, b: UsageView): boolean {
  return (
    a.total_tokens !== b.total_tokens ||
    a.input_tokens !== b.input_tokens ||
    a.cached_input_tokens !== b.cached_input_tokens ||
    a.output_tokens !== b.output_tokens ||
    a.cost_usd !== b.cost_usd
  );
}

/** What a tree spent against its budget, per limit set: `1,200 / 5,000 tokens · $0.01 / $5.00`. */
export function budgetNote(
  spent: { tokens: number; cost_usd: number },
  budget: NonNullable<RunView['budget']>,
): Html {
  const limits = [
    budget.max_tokens === null
      ? null
      : `${tokenCount(spent.tokens)} / ${tokenCount(budget.max_tokens)} tokens`,
    budget.max_cost_usd === null ? null : `${usd(spent.cost_usd)} / ${usd(budget.max_cost_usd)}`,
  ].filter((limit) => limit !== null);
  return html`<span
    class="budget-note"
    data-max-tokens="${budget.max_tokens ?? ''}"
    data-max-cost-usd="${budget.max_cost_usd ?? ''}"
    >${limits.join(' · ')}</span
  >`;
}

/** What one attempt's model turns used: their count, tokens and cost. */
export interface AttemptSpend {
  turns: number;
  tokens: number;
  /** Integer micro-dollars. */
  costMicroUsd: number;
}

/**
 * Each attempt's spend (by epoch) from the run's stored `ModelRequestCompleted`
 * events: a turn's answer carries the usage the provider reported and its
 * cost (events stored before costs were carried count no cost); a retry's
 * carries neither.
 */
export function attemptSpends(events: readonly StoredEvent[]): Map<number, AttemptSpend> {
  const spends = new Map<number, AttemptSpend>();
  for (const event of events) {
    const data = (event.data ?? {}) as {
      epoch?: unknown;
      retrying?: unknown;
      usage?: Partial<Usage> | null;
      costMicroUsd?: unknown;
    };
    if (data.retrying || typeof data.epoch !== 'number') continue;
    const spend = spends.get(data.epoch) ?? { turns: 0, tokens: 0, costMicroUsd: 0 };
    spend.turns += 1;
    spend.tokens += typeof data.usage?.totalTokens === 'number' ? data.usage.totalTokens : 0;
    spend.costMicroUsd += typeof data.costMicroUsd === 'number' ? data.costMicroUsd : 0;
    spends.set(data.epoch, spend);
  }
  return spends;
}

/** An attempt's spend as its lane shows it: `2 model turns: 1,234 tokens, $0.0028`. */
export function attemptSpendNote(spend: AttemptSpend | undefined): Html | '' {
  if (!spend) return '';
  const cost = usdOf(spend.costMicroUsd);
  return html` ·
    <span class="lane-spend" data-tokens="${spend.tokens}" data-cost-usd="${cost}"
      >${spend.turns} model turn${spend.turns === 1 ? '' : 's'}: ${tokensText(spend.tokens)},
      ${usd(cost)}</span
    >`;
}
