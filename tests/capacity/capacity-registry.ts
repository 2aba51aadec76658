/**
 * The registry of the model capacity fleet tests (`CAIRN_REGISTRY`): agents
 * and teams on several OpenAI-compatible models of one server
 * (`OPENAI_BASE_URL`, the fake server with a quota), so one fleet serves
 * models under different limits, and one under none. The server plays
 * their flow with {@link capacityScript}.
 */
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { Agent, DELEGATE_TOOL_NAME, OpenAIChatModel, Registry, Team, tool } from '@cairn/engine';
import {
  firstUserInput,
  toolResults,
  type ScriptContext,
  type ScriptedReply,
} from '@cairn/engine/testing';
import { z } from 'zod';

/**
 * The models the registry's entities run on, by their id on the wire (the
 * request body's `model`, as the fake server's quota and ledger name it);
 * each test governs its own, so one fleet and one server serve them all.
 */
export const CAPACITY_MODELS = [
  'paced',
  'unruled',
  'single',
  'free',
  'guarded',
  'metered',
] as const;
/** One of {@link CAPACITY_MODELS}. */
export type CapacityModel = (typeof CAPACITY_MODELS)[number];

/** The `Model.name` of a model of the server: what `CAIRN_MODEL_LIMITS` names. */
export const modelName = (model: CapacityModel) => `openai-chat:${model}`;
/** The agent on `model`: a search, two fetches (one batch each), a report: four model requests. */
export const agentOn = (model: CapacityModel) =>
  ({ kind: 'agent', name: `researcher-${model}` }) as const;
/** The team on `model`, delegating to its member on it: six model requests, four of them the member's. */
export const teamOn = (model: CapacityModel) => ({ kind: 'team', name: `team-${model}` }) as const;

const ITEMS = ['item-a', 'item-b'];

/** The epoch tag a tool result carries: which execution of the run produced the committed result. */
const epochTag = (epoch: number) => `[epoch ${epoch}]`;

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason)), {
      once: true,
    });
  });
}

/** Sleeps `CAPACITY_TOOL_DELAY_MS`, then appends `tool, idempotency key, epoch, run` to `CAIRN_TOOL_LEDGER`: the side effect a committed batch must never repeat. */
async function execute(
  name: string,
  output: string,
  ctx: { signal: AbortSignal; idempotencyKey: string; epoch: number; runId: string },
): Promise<string> {
  await sleep(Number(process.env.CAPACITY_TOOL_DELAY_MS ?? 50), ctx.signal);
  const file = process.env.CAIRN_TOOL_LEDGER;
  if (file) appendFileSync(file, `${name}\t${ctx.idempotencyKey}\t${ctx.epoch}\t${ctx.runId}\n`);
  return `${output} ${epochTag(ctx.epoch)}`;
}

const search = tool({
  name: 'search',
  description: 'Search for a topic.',
  parameters: z.object({ query: z.string().min(1) }),
  execute: ({ query }, ctx) => execute('search', `Results for '${query}'`, ctx),
});

const fetchDetail = tool({
  name: 'fetch_detail',
  description: 'Fetch the details of one result.',
  parameters: z.object({ item: z.string().min(1) }),
  execute: ({ item }, ctx) => execute('fetch_detail', `Detail of ${item}`, ctx),
});

/**
 * The flow the fake server plays, from each request's messages: an agent
 * searches, fetches each item in its own batch and reports; a team (offered
 * the delegation tool) delegates once and summarizes.
 */
export function capacityScript(context: ScriptContext): ScriptedReply {
  const { messages } = context;
  if (context.tools.some((t) => t.name === DELEGATE_TOOL_NAME)) {
    const delegations = toolResults(messages, DELEGATE_TOOL_NAME);
    if (delegations.length === 0) {
      return {
        toolCalls: [
          {
            name: DELEGATE_TOOL_NAME,
            arguments: { member: 'member', task: firstUserInput(messages) },
          },
        ],
      };
    }
    return { text: `Summary:\n${delegations.at(-1)!.content}` };
  }
  if (toolResults(messages, 'search').length === 0)
    return { toolCalls: [{ name: 'search', arguments: { query: firstUserInput(messages) } }] };
  const fetches = toolResults(messages, 'fetch_detail');
  const next = ITEMS[fetches.length];
  if (next) return { toolCalls: [{ name: 'fetch_detail', arguments: { item: next } }] };
  return {
    text: `Report on ${firstUserInput(messages)}:\n${fetches.map((f) => f.content).join('\n')}`,
  };
}

/** One line of the tool ledger: an execution of a tool call. */
export interface ToolExecution {
  tool: string;
  idempotencyKey: string;
  epoch: number;
  runId: string;
}

/** The executions `CAIRN_TOOL_LEDGER` recorded, across every worker process (killed ones included). */
export function readToolLedger(file: string): ToolExecution[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [tool, idempotencyKey, epoch, runId] = line.split('\t');
      return { tool: tool!, idempotencyKey: idempotencyKey!, epoch: Number(epoch), runId: runId! };
    });
}

/** The epoch of the execution whose result a committed tool result carries; undefined for none. */
export function epochOfResult(result: string | null): number | undefined {
  const match = result === null ? null : /\[epoch (\d+)\]$/.exec(result);
  return match ? Number(match[1]) : undefined;
}

/**
 * The capacity tests' registry: for each of {@link CAPACITY_MODELS} an agent
 * `researcher-<model>` and a team `team-<model>` with its `member`, on that
 * model of the server at `baseUrl` (`OPENAI_BASE_URL` in a worker). The
 * worker's `CAIRN_MODEL` is ignored: each entity names its own model.
 */
export function createRegistry(options: { baseUrl?: string } = {}): Registry {
  const baseURL = options.baseUrl ?? process.env.OPENAI_BASE_URL;
  const agent = (name: string, model: OpenAIChatModel) =>
    new Agent({
      name,
      role: 'Researches a topic with search and fetch_detail.',
      model,
      tools: [search, fetchDetail],
      checkpoint: 'tool-batch',
      instructions: 'Search, fetch each result, report.',
    });
  const agents: Agent[] = [];
  const teams: Team[] = [];
  for (const name of CAPACITY_MODELS) {
    const model = new OpenAIChatModel({ model: name, baseURL, apiKey: 'no-key-needed' });
    agents.push(agent(agentOn(name).name, model));
    teams.push(
      new Team({
        name: teamOn(name).name,
        model,
        members: [agent('member', model)],
        checkpoint: 'tool-batch',
        instructions: 'Delegate the research to the member, then summarize.',
      }),
    );
  }
  return new Registry({ agents, teams });
}
