import {
  Agent,
  DELEGATE_TOOL_NAME,
  Registry,
  Team,
  tool,
  type Model,
  type ToolContext,
} from '@cairn/engine';
import {
  firstUserInput,
  ScriptedModel,
  toolResults,
  type ScriptContext,
  type ScriptedReply,
} from '@cairn/engine/testing';
import { z } from 'zod';
import { recordToolExecution } from './tool-ledger.js';

/** The team the chaos harness submits runs to. */
export const CHAOS_TEAM = 'chaos-team';
/** The team's only member. */
export const CHAOS_RESEARCHER = 'chaos-researcher';
/** An agent whose restarts need a person's approval (the approvals scenario). */
export const CHAOS_OPERATOR = 'chaos-operator';
/** The tools whose executions the ledger counts. */
export const CHAOS_TOOLS = ['chaos_search', 'chaos_fetch_detail'] as const;
/** The gated tool of {@link CHAOS_OPERATOR}: its ledger rows must never repeat an idempotency key. */
export const CHAOS_GATED_TOOL = 'chaos_restart';

const RESULTS = ['result-a', 'result-b', 'result-c'];

function envMs(name: string, fallback: number): number {
  const value = Number(process.env[name]);
  return process.env[name] !== undefined && Number.isFinite(value) && value >= 0 ? value : fallback;
}

/** The tag a tool result carries so the harness can tell which execution produced a committed message. */
export function epochTag(epoch: number): string {
  return `[chaos-epoch ${epoch}]`;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason)), {
      once: true,
    });
  });
}

/** Sleeps like the seed's tools, then records the execution in the ledger: the external write a crash must not repeat once committed. */
async function execute(name: string, output: string, ctx: ToolContext): Promise<string> {
  await sleep(envMs('CHAOS_TOOL_DELAY_MS', 150), ctx.signal);
  await recordToolExecution(name, ctx);
  return `${output} ${epochTag(ctx.epoch)}`;
}

const chaosSearch = tool({
  name: 'chaos_search',
  description: 'Search for a query; returns the top 3 results.',
  parameters: z.object({ query: z.string().min(1) }),
  execute: ({ query }, ctx) =>
    execute('chaos_search', `Top 3 results for '${query}': ${RESULTS.join(', ')}`, ctx),
});

const chaosFetchDetail = tool({
  name: 'chaos_fetch_detail',
  description: 'Fetch the details of one search result.',
  parameters: z.object({ item: z.string().min(1) }),
  execute: ({ item }, ctx) => execute('chaos_fetch_detail', `Detail for ${item}: lorem ipsum`, ctx),
});

const chaosRestart = tool({
  name: CHAOS_GATED_TOOL,
  description: 'Restart a target; a person approves every call.',
  parameters: z.object({ target: z.string().min(1) }),
  needsApproval: true,
  execute: ({ target }, ctx) => execute(CHAOS_GATED_TOOL, `restarted ${target}`, ctx),
});

/** The operator's flow: two gated restarts in one batch, then a report of what they gave. */
function operatorScript({ messages }: ScriptContext): ScriptedReply {
  const restarts = toolResults(messages, CHAOS_GATED_TOOL);
  if (restarts.length === 0) {
    return {
      toolCalls: ['a', 'b'].map((t) => ({
        name: CHAOS_GATED_TOOL,
        arguments: { target: `${firstUserInput(messages)}/${t}` },
      })),
    };
  }
  return { text: `Restarts:\n${restarts.map((r) => `- ${r.content}`).join('\n')}` };
}

/** The researcher's flow, as the research team's: search once, fetch each result in its own batch, report. */
function researcherScript({ messages }: ScriptContext): ScriptedReply {
  const searches = toolResults(messages, 'chaos_search');
  const fetches = toolResults(messages, 'chaos_fetch_detail');
  if (searches.length === 0)
    return {
      toolCalls: [{ name: 'chaos_search', arguments: { query: firstUserInput(messages) } }],
    };
  const next = RESULTS[fetches.length];
  if (next) return { toolCalls: [{ name: 'chaos_fetch_detail', arguments: { item: next } }] };
  return { text: `Research report.\n${fetches.map((f) => `- ${f.content}`).join('\n')}` };
}

/** The team's flow: delegate once, then summarize. */
function teamScript({ messages }: ScriptContext): ScriptedReply {
  const delegations = toolResults(messages, DELEGATE_TOOL_NAME);
  if (delegations.length === 0) {
    return {
      toolCalls: [
        {
          name: DELEGATE_TOOL_NAME,
          arguments: { member: CHAOS_RESEARCHER, task: firstUserInput(messages) },
        },
      ],
    };
  }
  return { text: `Summary:\n${delegations.at(-1)!.content}` };
}

/**
 * The chaos harness's registry (`CAIRN_REGISTRY`): a research-team-shaped team
 * on scripted models with fresh tool-call ids (as a real model returns them),
 * whose tools sleep `CHAOS_TOOL_DELAY_MS` and record each execution in the
 * Postgres ledger at `CHAOS_LEDGER_URL`.
 * @public
 */
export function createRegistry(options: { model?: Model } = {}): Registry {
  const latencyMs = envMs('CHAOS_MODEL_LATENCY_MS', 30);
  const researcher = new Agent({
    name: CHAOS_RESEARCHER,
    role: 'Researches a topic with chaos_search and chaos_fetch_detail.',
    model:
      options.model ??
      new ScriptedModel({
        name: 'scripted:chaos-researcher',
        decide: researcherScript,
        latencyMs,
        toolCallIds: 'fresh',
      }),
    tools: [chaosSearch, chaosFetchDetail],
    checkpoint: 'tool-batch',
  });
  const team = new Team({
    name: CHAOS_TEAM,
    model:
      options.model ??
      new ScriptedModel({
        name: 'scripted:chaos-team',
        decide: teamScript,
        latencyMs,
        toolCallIds: 'fresh',
      }),
    members: [researcher],
    checkpoint: 'tool-batch',
  });
  const operator = new Agent({
    name: CHAOS_OPERATOR,
    model:
      options.model ??
      new ScriptedModel({
        name: 'scripted:chaos-operator',
        decide: operatorScript,
        latencyMs,
        toolCallIds: 'fresh',
      }),
    tools: [chaosRestart],
    checkpoint: 'tool-batch',
  });
  return new Registry({ teams: [team], agents: [operator] });
}
