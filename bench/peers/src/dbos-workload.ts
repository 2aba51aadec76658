/**
 * Child process: the peers workload on DBOS Transact, one step per tool batch.
 * As benched, the scripted model runs in the workflow body (deterministic, so
 * DBOS replays it instead of storing it); with BENCH_DBOS_MODEL_STEPS=1 each
 * model turn is a step of its own, as a real LLM agent on DBOS needs, so every
 * model output is durable.
 * Usage: dbos-workload.ts '<PeerConfig JSON>'; DATABASE_URL is DBOS's system database.
 */
import { DBOS } from '@dbos-inc/dbos-sdk';
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
  type WorkloadToolCall,
} from '../../lib/workload.js';

const config = readConfig();
const url = process.env.DATABASE_URL!;
const modelSteps = process.env.BENCH_DBOS_MODEL_STEPS === '1';
const reader = new pg.Client({ connectionString: url });
await reader.connect();
const probe = checkpointProbe(reader);

async function executeBatch(calls: WorkloadToolCall[]): Promise<WorkloadMessage[]> {
  return calls.map((c) => ({
    role: 'tool',
    toolCallId: c.id,
    name: c.name,
    content: toolResult((JSON.parse(c.arguments) as { query: string }).query),
  }));
}

type AssistantMessage = Extract<WorkloadMessage, { role: 'assistant' }>;

/** The scripted model's turn after `results` tool results: the next assistant message. */
async function modelTurn(results: number, batches: number): Promise<AssistantMessage> {
  const batch = nextBatch(results, batches);
  return batch === 0
    ? { role: 'assistant', content: FINAL_ANSWER }
    : { role: 'assistant', content: null, toolCalls: batchCalls(batch) };
}

/** One model turn and, when it asks for tools, their batch: a step each with model steps, else the tool batch alone. */
async function turn(results: number, batches: number) {
  const reply = modelSteps
    ? await DBOS.runStep(() => modelTurn(results, batches), { name: 'model' })
    : await modelTurn(results, batches);
  const calls = reply.toolCalls ?? [];
  const toolMessages =
    calls.length > 0 ? await DBOS.runStep(() => executeBatch(calls), { name: 'toolBatch' }) : [];
  return { reply, toolMessages };
}

async function agentRun(
  input: string,
  history: WorkloadMessage[],
  batches: number,
): Promise<string> {
  const messages: WorkloadMessage[] = [...history, { role: 'user', content: input }];
  let results = 0;
  for (;;) {
    // a tool batch's durable writes are the checkpoint measured; the final answer's step is not
    const batch = nextBatch(results, batches) !== 0;
    const { reply, toolMessages } = batch
      ? await probe.measure(() => turn(results, batches))
      : await turn(results, batches);
    messages.push(reply, ...toolMessages);
    if (!batch) return reply.content ?? '';
    results += toolMessages.length;
  }
}

const agentWorkflow = DBOS.registerWorkflow(agentRun, { name: 'agentRun' });
DBOS.setConfig({
  name: 'cairn-bench',
  systemDatabaseUrl: url,
  systemDatabasePoolSize: Math.max(10, config.concurrency),
  logLevel: 'error',
});
await DBOS.launch();

const oneRun = async () => {
  const answer = await agentWorkflow(RUN_INPUT, [], BATCHES);
  if (answer !== FINAL_ANSWER) throw new Error('DBOS run returned an unexpected answer');
};
const runsPerSecond = await measureRate(config, oneRun);
probe.on = true;
const serial = await measureSerial(config, reader, oneRun);
const checkpoints = probe.into.splice(0);
const growth: PeerResult['growth'] = [];
for (const size of config.historySizes) {
  const history = historyMessages(size);
  for (let rep = 0; rep < config.growthReps; rep++) await agentWorkflow(RUN_INPUT, history, 1);
  growth.push({ size, samples: probe.into.splice(0) });
}
probe.on = false;
const steady = await measureSteadyState(config, reader, oneRun);
reportResult({
  system: modelSteps ? 'dbos-model-steps' : 'dbos',
  runsPerSecond,
  checkpoints,
  serial,
  growth,
  steady,
  notes: modelSteps
    ? [
        'checkpoint = one tool batch: the model turn as a DBOS.runStep (its assistant message stored as the step output), then the tool batch as a DBOS.runStep; the final answer is a model step too; the run also writes its workflow status at start and end',
        'the history is the workflow input, written once at workflow start; each step stores only its own output',
      ]
    : [
        'checkpoint = DBOS.runStep around the tool batch (cancel check and recorded-output lookup, then the output INSERT); the model runs in the workflow body, so no model output is stored; the run also writes its workflow status at start and end',
        'the history is the workflow input, written once at workflow start; each step stores only its own output',
      ],
} satisfies PeerResult);
await DBOS.shutdown();
await reader.end();
