/**
 * Child process: the peers workload on LangGraph JS with the Postgres
 * checkpointer: agent node (scripted) and tools node, durability "sync".
 * Usage: langgraph-workload.ts '<PeerConfig JSON>'; DATABASE_URL.
 */
import { randomUUID } from 'node:crypto';
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import type { RunnableConfig } from '@langchain/core/runnables';
import { END, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import pg from 'pg';
import { reportResult } from '../../lib/child-result.js';
import {
  checkpointProbe,
  measureRate,
  measureSerial,
  measureSteadyState,
  readConfig,
  type PeerResult,
} from '../../lib/peer-harness.js';
import {
  BATCHES,
  batchCalls,
  FINAL_ANSWER,
  historyMessages,
  nextBatch,
  RUN_INPUT,
  toolResult,
  type WorkloadMessage,
} from '../../lib/workload.js';

const config = readConfig();
const url = process.env.DATABASE_URL!;
const reader = new pg.Client({ connectionString: url });
await reader.connect();
const probe = checkpointProbe(reader);
const writesProbe = checkpointProbe(reader);

class ProbedSaver extends PostgresSaver {
  override put(...args: Parameters<PostgresSaver['put']>) {
    return probe.measure(() => super.put(...args));
  }
  override putWrites(...args: Parameters<PostgresSaver['putWrites']>) {
    return writesProbe.measure(() => super.putWrites(...args));
  }
}

const saver = new ProbedSaver(
  new pg.Pool({ connectionString: url, max: Math.max(10, config.concurrency) }),
);
await saver.setup();

type State = typeof MessagesAnnotation.State;

function agent(state: State, runConfig: RunnableConfig) {
  const messages = state.messages;
  let lastHuman = -1;
  messages.forEach((m, i) => {
    if (m.getType() === 'human') lastHuman = i;
  });
  const results = messages.slice(lastHuman + 1).filter((m) => m.getType() === 'tool').length;
  const batch = nextBatch(
    results,
    (runConfig.configurable?.batches as number | undefined) ?? BATCHES,
  );
  if (batch === 0) return { messages: [new AIMessage(FINAL_ANSWER)] };
  const toolCalls = batchCalls(batch).map((c) => ({
    id: c.id,
    name: c.name,
    args: JSON.parse(c.arguments) as Record<string, unknown>,
    type: 'tool_call' as const,
  }));
  return { messages: [new AIMessage({ content: '', tool_calls: toolCalls })] };
}

function tools(state: State) {
  const last = state.messages.at(-1) as AIMessage;
  return {
    messages: (last.tool_calls ?? []).map(
      (tc) =>
        new ToolMessage({
          content: toolResult(String(tc.args.query)),
          tool_call_id: tc.id ?? '',
          name: tc.name,
        }),
    ),
  };
}

const graph = new StateGraph(MessagesAnnotation)
  .addNode('agent', agent)
  .addNode('tools', tools)
  .addEdge(START, 'agent')
  .addConditionalEdges('agent', (state: State) =>
    (state.messages.at(-1) as AIMessage).tool_calls?.length ? 'tools' : END,
  )
  .addEdge('tools', 'agent')
  .compile({ checkpointer: saver });

function toLangChain(messages: readonly WorkloadMessage[]): BaseMessage[] {
  return messages.map((m) => {
    if (m.role === 'user') return new HumanMessage(m.content);
    if (m.role === 'tool')
      return new ToolMessage({ content: m.content, tool_call_id: m.toolCallId, name: m.name });
    return new AIMessage({
      content: m.content ?? '',
      tool_calls: (m.toolCalls ?? []).map((c) => ({
        id: c.id,
        name: c.name,
        args: JSON.parse(c.arguments) as Record<string, unknown>,
        type: 'tool_call' as const,
      })),
    });
  });
}

async function invoke(history: BaseMessage[], batches: number): Promise<void> {
  const out = await graph.invoke(
    { messages: [...history, new HumanMessage(RUN_INPUT)] },
    { configurable: { thread_id: randomUUID(), batches }, durability: 'sync' },
  );
  if (out.messages.at(-1)?.content !== FINAL_ANSWER)
    throw new Error('LangGraph run returned an unexpected answer');
}

const runsPerSecond = await measureRate(config, () => invoke([], BATCHES));
probe.on = true;
writesProbe.on = true;
const serial = await measureSerial(config, reader, () => invoke([], BATCHES));
const checkpoints = probe.into.splice(0);
const secondaryWrites = writesProbe.into.splice(0);
const growth: PeerResult['growth'] = [];
for (const size of config.historySizes) {
  const history = toLangChain(historyMessages(size));
  for (let rep = 0; rep < config.growthReps; rep++) await invoke(history, 1);
  growth.push({ size, samples: probe.into.splice(0) });
  writesProbe.into.splice(0);
}
probe.on = false;
writesProbe.on = false;
const steady = await measureSteadyState(config, reader, () => invoke([], BATCHES));
reportResult({
  system: 'langgraph',
  runsPerSecond,
  checkpoints,
  secondaryWrites,
  serial,
  growth,
  steady,
  notes: [
    "checkpoint = PostgresSaver.put (one per super-step: input, each agent turn, each tools step); putWrites (each node's pending writes) is reported apart",
    'durability "sync" (each checkpoint written before the next step, as Cairn does); LangGraph\'s default is "async"',
    'each put re-serializes every channel that changed, and `messages` changes every step: the whole history is written again',
  ],
} satisfies PeerResult);
await saver.end();
await reader.end();
