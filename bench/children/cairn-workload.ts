/**
 * Child process: the peers workload on Cairn's Engine in this process (no
 * queue): runs/s, each checkpoint commit's cost and WAL, and the batch commit
 * at growing history. Usage: cairn-workload.ts '<PeerConfig JSON>'; DATABASE_URL.
 */
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { Engine } from '@cairn/engine';
import type { CheckpointDelta } from '@cairn/engine/store';
import {
  createDb,
  migrate,
  PostgresCheckpointStore,
  PostgresWebhookStore,
  type Database,
} from '@cairn/store';
import { BENCH_AGENT, createRegistry } from '../lib/bench-registry.js';
import { createClaimedRun, typicalDelta } from '../lib/checkpoint-fixture.js';
import { reportResult } from '../lib/child-result.js';
import {
  checkpointProbe,
  measureRate,
  measureSerial,
  measureSteadyState,
  readConfig,
  type PeerResult,
} from '../lib/peer-harness.js';
import { describeByRelation, describeRecords, walRecordBreakdown } from '../lib/wal-records.js';
import { tracedPool } from '../lib/traced-pool.js';
import { historyMessages, RUN_INPUT } from '../lib/workload.js';

const config = readConfig();
const url = process.env.DATABASE_URL!;
const db = createDb(url, { max: Math.max(10, config.concurrency) });
await migrate(db);
const reader = new pg.Client({ connectionString: url });
await reader.connect();
// The webhooks variant: endpoints of the runs' tenant (none: an admin key's) taking every event type.
const webhookEndpoints = Number(process.env.BENCH_WEBHOOK_ENDPOINTS ?? 0);
const webhooks = new PostgresWebhookStore(db);
for (let i = 0; i < webhookEndpoints; i++)
  await webhooks.createEndpoint({
    tenantId: null,
    url: `https://hooks${i}.example/cairn`,
    events: [],
  });
/** Rows the webhook outbox holds (one per notified event). */
const outboxRows = async () =>
  Number((await reader.query('select count(*)::int as n from webhook_events')).rows[0]?.n);
const probe = checkpointProbe(reader);

class ProbedStore extends PostgresCheckpointStore {
  override commitCheckpoint(runId: string, epoch: number, delta: CheckpointDelta): Promise<number> {
    return probe.measure(() => super.commitCheckpoint(runId, epoch, delta));
  }
}

const store = new ProbedStore(db);
const engine = new Engine({
  store,
  registry: createRegistry({ toolMs: 0, modelMs: 0 }),
  workerId: 'bench-peers',
});

async function oneRun(on: Engine = engine): Promise<void> {
  const run = await on.createRun({
    entity: { kind: 'agent', name: BENCH_AGENT },
    input: RUN_INPUT,
  });
  const result = await on.execute(run.runId, { reason: 'run' });
  if (result.outcome !== 'finished' || result.run.status !== 'COMPLETED')
    throw new Error(`run ${run.runId} did not complete`);
}

const runsPerSecond = await measureRate(config, () => oneRun());
probe.on = true;
const outboxBefore = await outboxRows();
const serial = await measureSerial(config, reader, () => oneRun());
const outboxPerRun = ((await outboxRows()) - outboxBefore) / config.serialRuns;
const checkpoints = probe.into.splice(0);
probe.on = false;
// Where a whole run's WAL goes (create, claim, 3 checkpoints with their events, finish).
const runRecords = await walRecordBreakdown(reader, () => oneRun(), 5);
probe.on = true;
const growth: PeerResult['growth'] = [];
for (const size of config.historySizes) {
  for (let rep = 0; rep < config.growthReps; rep++) {
    const run = await createClaimedRun(store, historyMessages(size));
    await store.commitCheckpoint(run.runId, run.epoch, typicalDelta(1_000_000));
  }
  growth.push({ size, samples: probe.into.splice(0) });
}
probe.on = false;
const steady = await measureSteadyState(config, reader, () => oneRun());
// Statements per run: the same runs one at a time on a pool that counts what it sends.
const traced = tracedPool(url, 4);
const tracedDb = new Kysely<Database>({ dialect: new PostgresDialect({ pool: traced.pool }) });
const tracedEngine = new Engine({
  store: new PostgresCheckpointStore(tracedDb),
  registry: createRegistry({ toolMs: 0, modelMs: 0 }),
  workerId: 'bench-peers-census',
});
const statementsPerRun: number[] = [];
for (let i = 0; i < config.serialRuns; i++) {
  traced.take();
  await oneRun(tracedEngine);
  statementsPerRun.push(traced.take().length);
}
await tracedDb.destroy();
reportResult({
  system: 'cairn',
  runsPerSecond,
  checkpoints,
  serial,
  growth,
  steady,
  statementsPerRun,
  notes: [
    'checkpoint = store.commitCheckpoint (one transaction per tool batch); the run also writes createRun, claimRun and finishRun',
    `webhook endpoints: ${webhookEndpoints}; webhook outbox rows per serial run: ${outboxPerRun}`,
    ...(runRecords
      ? [
          `WAL of one whole run by relation (pg_walinspect, mean of 5): ${describeByRelation(runRecords)}`,
          `WAL records of one whole run (pg_walinspect, mean of 5): ${describeRecords(runRecords)}`,
        ]
      : []),
  ],
} satisfies PeerResult);
await reader.end();
await db.destroy();
