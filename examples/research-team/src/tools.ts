import { tool } from '@cairn/engine';
import { z } from 'zod';
import { recordExecution } from './tool-ledger.js';
import { waitWhileHeld } from './tool-hold.js';

/** How long each research tool sleeps, like the seed's; `RESEARCH_TOOL_DELAY_MS` overrides it. */
export function toolDelayMs(): number {
  const value = Number(process.env.RESEARCH_TOOL_DELAY_MS ?? 1000);
  return Number.isFinite(value) && value >= 0 ? value : 1000;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason)), {
      once: true,
    });
  });
}

/** Mock search that takes about a second: a window to interrupt. */
export const slowSearch = tool({
  name: 'slow_search',
  description: 'Search the web for a query; returns the top 3 results.',
  parameters: z.object({ query: z.string().min(1) }),
  execute: async ({ query }, ctx) => {
    await sleep(toolDelayMs(), ctx.signal);
    recordExecution('slow_search', ctx.idempotencyKey);
    return `Top 3 results for '${query}': result-a, result-b, result-c`;
  },
});

/** Mock detail fetch, another second. */
export const slowFetchDetail = tool({
  name: 'slow_fetch_detail',
  description: 'Fetch the details of one search result.',
  parameters: z.object({ item: z.string().min(1) }),
  execute: async ({ item }, ctx) => {
    await waitWhileHeld(ctx.signal);
    await sleep(toolDelayMs(), ctx.signal);
    recordExecution('slow_fetch_detail', ctx.idempotencyKey);
    return `Detail for ${item}: lorem ipsum dolor sit amet`;
  },
});
