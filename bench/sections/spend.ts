import {
  Agent,
  Engine,
  OpenAIChatModel,
  parseModelPrices,
  priceFor,
  Registry,
  tool,
  usdOf,
} from '@cairn/engine';
import {
  firstUserInput,
  startFakeOpenAIServer,
  toolResults,
  type FakeOpenAIServer,
  type ScriptContext,
  type ScriptedReply,
} from '@cairn/engine/testing';
import { createDb, migrate, openStore, type RunView, type StoreReads } from '@cairn/store';
import { z } from 'zod';
import { FigureSink } from '../lib/attempt.js';
import {
  budgetOvershoot,
  type BudgetOvershoot,
  type LimitOvershoot,
} from '../lib/budget-overshoot.js';
import { EstimatingModel } from '../lib/estimating-model.js';
import { valueFigure } from '../lib/figure.js';
import type { Section, SectionContext } from '../lib/section.js';
import { summarize } from '../lib/stats.js';

const ID = 'spend';
/** The provider's model, by its id on the wire. */
const MODEL = 'gpt-spend';
/** Prices of the kind a provider lists: output dearer than input, so tokens and cost pause runs at different points. */
const PRICES = parseModelPrices(
  {
    [`openai-chat:${MODEL}`]: {
      input_per_mtok: 2.5,
      cached_input_per_mtok: 1.25,
      output_per_mtok: 10,
    },
  },
  'bench spend',
);
/** Lookups each run makes before it answers: up to nine model requests a run. */
const LOOKUPS = 8;
/** Runs executed at once in this process. */
const IN_FLIGHT = 5;
const AGENT = 'spender';

/** A deterministic pseudo-random integer in [0, max) for a run, a turn and a purpose. */
function vary(run: number, turn: number, salt: number, max: number): number {
  let h =
    Math.imul(run + 1, 0x9e3779b1) ^ Math.imul(turn + 1, 0x85ebca6b) ^ Math.imul(salt, 0xc2b2ae35);
  h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d);
  return ((h ^ (h >>> 13)) >>> 0) % max;
}

function runNumber(input: string): number {
  return Number(/^spend run (\d+)/.exec(input)?.[1] ?? 0);
}

/**
 * The provider's side: each run looks things up {@link LOOKUPS} times, then
 * answers. What a turn asks for and writes varies with the run and the turn
 * (0 to 1,000 output tokens, results of up to 3,000 characters), so actual
 * costs land above and below the estimates.
 */
function spenderFlow({ messages }: ScriptContext): ScriptedReply {
  const run = runNumber(firstUserInput(messages));
  const done = toolResults(messages).length;
  if (done < LOOKUPS)
    return {
      toolCalls: [
        {
          name: 'lookup',
          arguments: {
            topic: `topic ${run}.${done}`,
            size: 50 + vary(run, done, 1, 3_000),
            note: 'n'.repeat(vary(run, done, 2, 4_000)),
          },
        },
      ],
    };
  return { text: `Answer: ${'a'.repeat(20 + vary(run, done, 3, 6_000))}` };
}

const lookup = tool({
  name: 'lookup',
  description: 'Looks a topic up; returns `size` characters about it.',
  parameters: z.object({ topic: z.string(), size: z.number().int(), note: z.string() }),
  execute: ({ topic, size }) => `${topic}: ${'r'.repeat(size)}`,
});

/** Run `run`'s budget: a token limit and a cost limit, each at its own level, so either may pause it. */
function budgetOf(run: number): { maxTokens: number; maxCostUsd: number } {
  return {
    maxTokens: 1_000 + vary(run, 99, 4, 40_000),
    maxCostUsd: usdOf(1_000 + vary(run, 99, 5, 120_000)),
  };
}

/** Runs `count` runs with budgets through `engine`, `IN_FLIGHT` at a time; resolves with their views. */
async function runAll(engine: Engine, reads: StoreReads, count: number): Promise<RunView[]> {
  const views: RunView[] = [];
  let next = 0;
  const lane = async () => {
    for (let run = next++; run < count; run = next++) {
      const created = await engine.createRun({
        entity: { kind: 'agent', name: AGENT },
        input: `spend run ${run}: look things up, then answer`,
        budget: budgetOf(run),
      });
      const result = await engine.execute(created.runId, { reason: 'run' });
      if (result.outcome !== 'finished') throw new Error(`run ${created.runId}: ${result.outcome}`);
      const view = await reads.getRunView(created.runId);
      if (!view) throw new Error(`run ${created.runId} not found`);
      views.push(view);
    }
  };
  // Every lane ends before the store closes; the first failure stops the others' next runs.
  const lanes = await Promise.allSettled(
    Array.from({ length: IN_FLIGHT }, () =>
      lane().catch((error: unknown) => {
        next = count;
        throw error;
      }),
    ),
  );
  const failed = lanes.find((l) => l.status === 'rejected');
  if (failed) throw failed.reason;
  return views;
}

/** The paused runs' overshoots; throws for a run that is neither paused for its budget nor completed. */
function overshootsOf(
  views: readonly RunView[],
  model: EstimatingModel,
): { paused: BudgetOvershoot[]; completed: number } {
  const price = priceFor(PRICES, model.name);
  const paused: BudgetOvershoot[] = [];
  let completed = 0;
  for (const view of views) {
    if (view.status === 'COMPLETED') {
      completed += 1;
      continue;
    }
    const [action] = view.pending_actions;
    if (view.status !== 'PAUSED' || action?.kind !== 'budget')
      throw new Error(`run ${view.run_id} ended ${view.status}, not paused for its budget`);
    paused.push(budgetOvershoot(view, model.responses, price));
  }
  return { paused, completed };
}

const NAMES = {
  usd: 'spend past a budget, max over paused runs, USD',
  tokens: 'spend past a budget, max over paused runs, tokens',
  past: 'paused runs past their bound (last response actual - estimate)',
  recorded: 'tokens recorded / tokens billed',
} as const;

/** One limit's overshoots over the paused runs: the largest, with its own bound, and the spread of bounds. */
function limitFigure(
  name: string,
  unit: 'USD' | 'tokens',
  limits: readonly LimitOvershoot[],
  note: string,
) {
  const show = (x: number) => (unit === 'USD' ? usdOf(x).toFixed(6) : String(x));
  const largest = limits.reduce((a, b) => (b.overshoot > a.overshoot ? b : a));
  const bounds = summarize(limits.map((l) => l.bound));
  const above = limits.filter((l) => l.overshoot > 0).length;
  return valueFigure(
    ID,
    name,
    unit === 'USD' ? usdOf(largest.overshoot) : largest.overshoot,
    unit,
    limits.length,
    `its bound ${show(largest.bound)}; ${above} runs above this limit; bounds ${show(bounds.min)}..${show(bounds.max)}`,
    { note },
  );
}

/** The section's figures from the runs' views, their overshoots and the provider's ledger. */
function spendFigures(
  views: readonly RunView[],
  paused: readonly BudgetOvershoot[],
  completed: number,
  billedTokens: number,
) {
  const held = paused.filter((p) => p.responses > 0);
  const usd = held.flatMap((p) => (p.microUsd ? [p.microUsd] : []));
  const tokens = held.flatMap((p) => (p.tokens ? [p.tokens] : []));
  const past = held.filter((p) =>
    [p.tokens, p.microUsd].some((l) => l !== null && l.overshoot > l.bound),
  );
  const recorded = views.reduce((sum, v) => sum + v.usage_total.total_tokens, 0);
  // How near the nearest run came to its bound, per limit (negative: below it).
  const margin = (limits: readonly LimitOvershoot[]) =>
    Math.max(...limits.map((l) => l.overshoot - l.bound));
  return [
    limitFigure(
      NAMES.usd,
      'USD',
      usd,
      "spent (usage_total.cost_usd) - budget.max_cost_usd; bound: the last committed response's actual cost - its request's estimate",
    ),
    limitFigure(
      NAMES.tokens,
      'tokens',
      tokens,
      'spent (usage_total.total_tokens) - budget.max_tokens; bound likewise in tokens',
    ),
    valueFigure(
      ID,
      NAMES.past,
      past.length,
      'runs',
      held.length,
      `${paused.length} paused, ${paused.length - held.length} before any response, ${completed} completed within budget; ` +
        `nearest: overshoot - bound ${margin(tokens)} tokens, ${usdOf(margin(usd)).toFixed(6)} USD`,
      { goal: { op: '<=', bound: 0 } },
    ),
    valueFigure(
      ID,
      NAMES.recorded,
      recorded / billedTokens,
      'x',
      views.length,
      `${recorded} tokens in the runs' usage, ${billedTokens} in the provider's ledger`,
      { goal: { op: '=', bound: 1 } },
    ),
  ];
}

async function measure(
  context: SectionContext,
  sink: FigureSink,
  runs: number,
): Promise<Record<string, unknown>> {
  const database = await context.services.database(ID);
  const db = createDb(database.url);
  let server: FakeOpenAIServer | undefined;
  const details: Record<string, unknown> = {};
  try {
    await migrate(db);
    const { writes, reads } = openStore(db);
    // No limits: the quota's ledger is the provider's bill.
    server = await startFakeOpenAIServer({
      decide: spenderFlow,
      quota: { perModel: { [MODEL]: {} } },
    });
    const ledger = server.quota;
    const inner = new OpenAIChatModel({ model: MODEL, apiKey: 'k', baseURL: server.url });
    const model = new EstimatingModel(inner, priceFor(PRICES, inner.name));
    const registry = new Registry({
      agents: [
        new Agent({
          name: AGENT,
          instructions: 'Look each topic up, then answer.',
          model,
          tools: [lookup],
        }),
      ],
    });
    const engine = new Engine({
      store: writes,
      registry,
      prices: PRICES,
      workerId: 'bench-spend',
    });
    await sink.part(Object.values(NAMES), async () => {
      context.log(`${runs} runs with budgets, ${IN_FLIGHT} at a time`);
      const views = await runAll(engine, reads, runs);
      const { paused, completed } = overshootsOf(views, model);
      sink.figures.push(...spendFigures(views, paused, completed, ledger.tokens(MODEL)));
      details.overshoots = paused;
      sink.notes.push(
        `${runs} agent runs on the engine in this process over a real Postgres store, ${IN_FLIGHT} at a time, each with a budget ` +
          `(max_tokens 1,000..41,000 and max_cost_usd 0.001..0.121, levels varied per run), OpenAIChatModel (streaming) against the fake OpenAI server, which reports usage as ` +
          `its own count of the wire request and answer (about 4 characters a token); prices 2.5 USD / Mtok input, 10 output. ` +
          `Each run makes up to ${LOOKUPS + 1} requests whose answers vary from 0 to about 1,500 output tokens. ` +
          "The bound of each paused run is its last committed response's actual tokens and cost (the response's usage at these prices) minus the engine's estimate of its request " +
          '(estimateRequestSpend, the function the budget check uses, on that request), checked for every limit of its budget.',
      );
    });
  } finally {
    await server?.close();
    await db.destroy();
  }
  return details;
}

/** Spend (#20): how far past its budget a run can spend, and whether every billed token is recorded. */
export const spendSection: Section = {
  id: ID,
  title: 'Spend',
  cairn: true,
  async run(context) {
    const sink = new FigureSink(ID, context.log);
    const details = await measure(context, sink, context.quick ? 10 : 50);
    return { figures: sink.figures, notes: sink.notes, details, failed: sink.failed };
  },
};
