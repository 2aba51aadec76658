/**
 * Child process: the peers workload on DBOS Transact, one step per tool batch
 * (the scripted model is deterministic, so it runs in the workflow body).
 * Usage: dbos-workload.ts '<PeerConfig JSON>'; DATABASE_URL is DBOS's system database.
 */
import { DBOS } from '@dbos-inc/dbos-sdk';
import pg from 'pg';
import { reportResult } from '../../lib/child-result.js';
import {
  checkpointProbe,
  measureRate,
  measureSerial,
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

async function agentRun(
  input: string,
  history: WorkloadMessage[],
  batches: number,
): Promise<string> {
  const messages: WorkloadMessage[] = [...history, { role: 'user', content: input }];
  let results = 0;
  for (;;) {
    const batch = nextBatch(results, batches);
    if (batch === 0) return FINAL_ANSWER;
    const calls = batchCalls(batch);
    messages.push({ role: 'assistant', content: null, toolCalls: calls });
    const toolMessages = await probe.measure(() =>
      DBOS.runStep(() => executeBatch(calls), { name: 'toolBatch' }),
    );
    messages.push(...toolMessages);
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
reportResult({
  system: 'dbos',
  runsPerSecond,
  checkpoints,
  serial,
  growth,
  notes: [
    'checkpoint = DBOS.runStep around the tool batch (cancel check and recorded-output lookup, then the output INSERT); the run also writes its workflow status at start and end',
    'the history is the workflow input, written once at workflow start; each step stores only its own output',
  ],
} satisfies PeerResult);
await DBOS.shutdown();
await reader.end();
