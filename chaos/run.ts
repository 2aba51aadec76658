import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDatabase, freePort, spawnApp, type AppProcess } from '@cairn/services';
import { createDb, migrate } from '@cairn/store';
import { Redis } from 'ioredis';
import { harnessPool } from './chaos-db.js';
import { ChaosFleet, killAllSync } from './chaos-fleet.js';
import {
  buildCompiledProducer,
  buildCompiledWorker,
  spawnCompiledWorker,
} from './compiled-worker.js';
import { parseChaosOptions } from './chaos-options.js';
import { buildReport, formatReport, writeReport } from './chaos-report.js';
import { installChaosSchema } from './chaos-schema.js';
import { startChaosServices } from './chaos-services.js';
import { buildFaultSchedule } from './fault-schedule.js';
import { runFleetScenario } from './fleet-scenario.js';
import { runFlushScenario } from './flush-scenario.js';
import { runApprovalScenario, type ApprovalScenarioReport } from './approval-scenario.js';
import { runCapacityScenario, type CapacityScenarioReport } from './capacity-scenario.js';
import { ChaosProducers } from './chaos-producers.js';
import type { ChaosScenarioName } from './chaos-options.js';
import type { ScenarioReport } from './chaos-report.js';
import {
  runScheduleWebhookScenario,
  type ScheduleWebhookScenarioReport,
} from './schedule-webhook-scenario.js';
import type { ScenarioContext } from './scenario-context.js';
import { scenarioReports } from './scenario-reports.js';

const RESULTS_FILE = join(import.meta.dirname, 'results', 'latest.json');
const API_KEY = 'chaos-harness-key';
const WORKERS = 3;
const QUEUE = 'chaos-runs';
const LOCK_MS = 2_000;

const options = parseChaosOptions(process.argv.slice(2));
const schedule = buildFaultSchedule(options);
const log = (message: string) => console.log(message);
const logDir = mkdtempSync(join(tmpdir(), 'cairn-chaos-logs-'));
log(
  `chaos: ${options.runs} runs, ${options.kills} kills, seed ${options.seed}, ${schedule.faults.length} faults over ${schedule.windowMs / 1000} s; ` +
    `flush scenario ${options.flushRuns} runs; logs in ${logDir}`,
);

const services = await startChaosServices();
let producer: AppProcess | undefined;
let fleet: ChaosFleet | undefined;
const killChildren = () =>
  killAllSync([...(fleet?.all.map((w) => w.app) ?? []), ...(producer ? [producer] : [])]);
process.on('exit', killChildren);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    console.error(`chaos: ${signal}, stopping`);
    killChildren();
    void services.stop().finally(() => process.exit(130));
  });
}
const db = await (async () => {
  const database = await createDatabase(services.postgresUrl, 'chaos');
  const store = createDb(database.url);
  await migrate(store);
  await store.destroy();
  const pool = harnessPool(database.url);
  await installChaosSchema(pool);
  return { pool, url: database.url };
})();

let exitCode = 1;
let probe: Redis | undefined;
try {
  const wants = (scenario: ChaosScenarioName) =>
    options.scenario === undefined || options.scenario === scenario;
  // Built together from the same sources: a producer built later, from a tree edited meanwhile, could
  // record definition hashes the workers do not have, and its runs would wait for a deploy.
  const [compiled, compiledProducer] = await Promise.all([
    buildCompiledWorker(),
    wants('schedules-webhooks') ? buildCompiledProducer() : undefined,
  ]);
  const env = {
    DATABASE_URL: db.url,
    REDIS_URL: services.redis.url,
    CAIRN_QUEUE_BACKEND: 'redis',
    CAIRN_QUEUE_NAME: QUEUE,
    CAIRN_REGISTRY: compiled.registry,
    CAIRN_MODEL: 'scripted',
    OPENAI_API_KEY: undefined,
    CAIRN_API_KEYS: API_KEY,
    CHAOS_LEDGER_URL: db.url,
    CHAOS_TOOL_DELAY_MS: '150',
    CHAOS_MODEL_LATENCY_MS: '30',
    WORKER_CONCURRENCY: '8',
    CAIRN_LOCK_MS: String(LOCK_MS),
    CAIRN_STALLED_INTERVAL_MS: '500',
    CAIRN_RECONCILE_INTERVAL_MS: '2000',
    CAIRN_RECONCILE_AFTER_MS: '10000',
    LOG_LEVEL: 'info',
  };
  const port = await freePort();
  // The producer runs from sources (tsx), so it takes the registry's sources too: one copy of the engine's classes per process.
  const producerEnv = {
    ...env,
    PORT: String(port),
    CAIRN_REGISTRY: join(import.meta.dirname, 'chaos-registry.ts'),
  };
  producer = spawnApp('producer', {
    name: 'producer',
    env: producerEnv,
    logFile: join(logDir, 'producer.log'),
  });
  fleet = new ChaosFleet(env, logDir, (spawnOptions) =>
    spawnCompiledWorker(compiled.script, spawnOptions),
  );
  await Promise.all([producer.waitForLog('producer listening', 120_000), fleet.start(WORKERS)]);
  const redis = new Redis(services.redis.url, { maxRetriesPerRequest: 1 });
  redis.on('error', () => undefined);
  probe = redis;
  const ctx: ScenarioContext = {
    waitingJobs: async () =>
      (await redis.llen(`bull:${QUEUE}:wait`)) + (await redis.zcard(`bull:${QUEUE}:prioritized`)),
    db: db.pool,
    fleet,
    services,
    api: { baseUrl: `http://127.0.0.1:${port}`, apiKey: API_KEY },
    lockMs: LOCK_MS,
    log,
  };
  /** A scenario gives up draining once no run has finished for this long. */
  const drainMs = 180_000;

  let scenarios: ScenarioReport[] = [];
  if (wants('fleet')) {
    log(`scenario fleet: ${options.runs} runs under ${schedule.faults.length} faults`);
    const fleetRun = await runFleetScenario(ctx, { runs: options.runs, schedule, drainMs });
    log(`scenario redis-flush: ${options.flushRuns} runs, FLUSHALL once`);
    const flushRun = await runFlushScenario(ctx, { runs: options.flushRuns, drainMs });
    scenarios = await scenarioReports(db.pool, {
      fleetRun,
      flushRun,
      exits: fleet.unexpectedExits,
      lockMs: LOCK_MS,
    });
  }

  let approvals: ApprovalScenarioReport | undefined;
  if (wants('approvals')) {
    const approvalRuns = Math.max(10, Math.round(options.runs / 5));
    const approvalKills = Math.max(3, Math.round(options.kills / 2));
    log(
      `scenario approvals: ${approvalRuns} paused runs, decisions posted during ${approvalKills} kills`,
    );
    approvals = await runApprovalScenario(ctx, {
      runs: approvalRuns,
      kills: approvalKills,
      seed: options.seed,
      drainMs,
    });
  }

  await fleet.stopAll();
  const fleetWith = (extra: Record<string, string>) =>
    new ChaosFleet({ ...env, ...extra }, logDir, (spawnOptions) =>
      spawnCompiledWorker(compiled.script, spawnOptions),
    );
  let schedulesWebhooks: ScheduleWebhookScenarioReport | undefined;
  if (wants('schedules-webhooks')) {
    // Its own queue, two producers and two workers: a worker or a producer SIGKILLed every few seconds.
    // Before capacity: the producers pin a new run to the definition the fleet last served, and the
    // capacity fleet serves the same entities on another model (its runs would wait for that fleet).
    const kills = Math.max(6, Math.round(options.kills / 5));
    const windowMs = Math.max(30_000, kills * 4_500);
    log(
      `scenario schedules-webhooks: 3 interval schedules (every 1 s, 2 s, 3 s) for ${windowMs / 1000} s, ${kills} SIGKILLs of workers and producers, a webhook receiver failing first attempts and down for a while`,
    );
    schedulesWebhooks = await runScheduleWebhookScenario(ctx, {
      kills,
      windowMs,
      seed: options.seed,
      drainMs: 60_000,
      fleetWith,
      producersWith: (extra) =>
        new ChaosProducers({ ...producerEnv, ...extra }, logDir, compiledProducer!),
      redisUrl: services.redis.url,
    });
  }
  let capacity: CapacityScenarioReport | undefined;
  if (wants('capacity')) {
    // Its own fleet, on an OpenAI-compatible provider with a quota instead of the scripted models.
    const capacityRuns = Math.max(16, Math.round(options.runs / 10));
    const capacityKills = Math.max(3, Math.round(options.kills / 10));
    log(
      `scenario capacity: ${capacityRuns} team runs on a provider with a quota, ${capacityKills} SIGKILLs while runs are parked, the provider's quota halved under the fleet's limit`,
    );
    capacity = await runCapacityScenario(ctx, {
      runs: capacityRuns,
      kills: capacityKills,
      workers: WORKERS,
      seed: options.seed,
      drainMs,
      fleetWith,
    });
  }

  const report = buildReport(options, scenarios, logDir, approvals, capacity, schedulesWebhooks);
  writeReport(RESULTS_FILE, report);
  log(`\n${formatReport(report)}\nwrote ${RESULTS_FILE}`);
  for (const s of scenarios)
    if (!s.passed) log(`${s.scenario} examples: ${JSON.stringify(s.examples, null, 2)}`);
  if (capacity && !capacity.passed)
    log(`capacity examples: ${JSON.stringify(capacity.examples, null, 2)}`);
  exitCode = report.passed ? 0 : 1;
} catch (error) {
  console.error('chaos run failed:', error);
} finally {
  await fleet?.stopAll().catch(() => undefined);
  if (producer?.alive) {
    producer.kill('SIGTERM');
    const timer = setTimeout(() => producer?.kill('SIGKILL'), 10_000);
    await producer.exited;
    clearTimeout(timer);
  }
  probe?.disconnect();
  await db.pool.end().catch(() => undefined);
  await services.stop();
  if (exitCode === 0 && !options.keepLogs) rmSync(logDir, { recursive: true, force: true });
  else log(`logs kept in ${logDir}`);
}
process.exit(exitCode);
