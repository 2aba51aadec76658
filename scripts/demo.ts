/**
 * `npm run demo`: the seed's crash-recovery story on a fleet, with no setup.
 * Starts Postgres (and Redis when a redis-server binary exists), a producer
 * and two workers; enqueues the research team with tool-batch checkpoints;
 * SIGKILLs the worker holding the run after its first checkpoint; shows the
 * other worker resume it through stalled-job detection, no manual continue.
 * `--keep` leaves everything running afterwards; `--queue postgres` uses
 * BullMQ's PostgreSQL backend even when Redis is available. `--approval`
 * tells the human-in-the-loop story instead (scripts/lib/approval-demo.ts).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FINAL_STATUSES } from '@cairn/engine';
import { DEFAULT_LOCK_MS, DEFAULT_STALLED_INTERVAL_MS } from '@cairn/runtime';
import { freePort, spawnApp, startPostgres, startRedis, type AppProcess } from '@cairn/services';
import { createDb, migrate, type RunView } from '@cairn/store';
import { approvalStory } from './lib/approval-demo.js';
import { DemoNarrator, describeRun } from './lib/demo-narrator.js';
import { DemoConsole } from './lib/demo-console.js';
import { printLiveText } from './lib/live-text.js';

const keep = process.argv.includes('--keep');
const approval = process.argv.includes('--approval');
const queueFlag = process.argv.indexOf('--queue');
const queueChoice = queueFlag >= 0 ? process.argv[queueFlag + 1] : undefined;
if (queueChoice !== undefined && queueChoice !== 'redis' && queueChoice !== 'postgres') {
  console.error(`--queue must be "redis" or "postgres", got ${JSON.stringify(queueChoice)}`);
  process.exit(2);
}
// The narrator's lines and the live text share stdout without cutting into each other.
const terminal = new DemoConsole();
const narrator = new DemoNarrator((line) => terminal.line(line));
const banner = (title: string) => terminal.line(`\n${'='.repeat(72)}\n${title}\n${'='.repeat(72)}`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
// Generous: on a loaded machine (the test suite's) three processes starting at once took over 30 s.
const START_TIMEOUT_MS = 90_000;

const logDir = mkdtempSync(join(tmpdir(), 'cairn-demo-'));
const processes: AppProcess[] = [];
const stops: (() => Promise<void>)[] = [];

async function main(): Promise<void> {
  banner('STEP 0: start the services (nothing to set up by hand)');
  const postgres = await startPostgres();
  stops.push(() => postgres.stop());
  console.log(
    `Postgres: ${postgres.source === 'env' ? 'DATABASE_URL' : `${postgres.source} binaries`} (${redact(postgres.url)})`,
  );
  const redis = queueChoice === 'postgres' ? undefined : await startRedis();
  if (queueChoice === 'redis' && !redis)
    throw new Error('--queue redis: no REDIS_URL and no redis-server binary');
  if (redis) stops.push(() => redis.stop());
  console.log(
    redis
      ? `Queue: BullMQ on Redis (${redis.source === 'env' ? 'REDIS_URL' : 'redis-server binary'}, ${redact(redis.url)})`
      : `Queue: BullMQ on its PostgreSQL backend (${queueChoice ? '--queue postgres' : 'no redis-server binary found'}): one Postgres serves queue and store`,
  );
  const db = createDb(postgres.url);
  await migrate(db);
  await db.destroy();

  const port = await freePort();
  const env = {
    DATABASE_URL: postgres.url,
    REDIS_URL: redis?.url,
    CAIRN_QUEUE_BACKEND: redis ? 'redis' : 'postgres',
    CAIRN_MODEL: process.env.OPENAI_API_KEY ? process.env.CAIRN_MODEL : 'scripted',
    PORT: String(port),
    LOG_LEVEL: 'info',
    ...(approval && { CAIRN_REGISTRY: '@cairn/ops-agent', OPS_LEDGER_URL: postgres.url }),
  };
  const producer = spawnApp('producer', {
    name: 'producer',
    env,
    logFile: join(logDir, 'producer.log'),
  });
  processes.push(producer);
  const workers = ['demo-worker-1', 'demo-worker-2'].map((id) => {
    const worker = spawnApp('worker', {
      name: id,
      env: { ...env, CAIRN_WORKER_ID: id },
      logFile: join(logDir, `${id}.log`),
    });
    processes.push(worker);
    return worker;
  });
  await Promise.all([
    producer.waitForLog('producer listening', START_TIMEOUT_MS),
    ...workers.map((w) => w.waitForLog('worker started', START_TIMEOUT_MS)),
  ]);
  const api = `http://127.0.0.1:${port}`;
  console.log(
    `Producer: ${api}   Run pages: ${api}/ui   Bull Board: ${api}/admin/queues   logs: ${logDir}`,
  );
  console.log(
    `Workers: ${workers.map((w) => `${w.name} (pid ${w.proc.pid})`).join(', ')}; lock ${DEFAULT_LOCK_MS} ms, stalled check every ${DEFAULT_STALLED_INTERVAL_MS} ms`,
  );
  if (approval) {
    await approvalStory({
      api,
      databaseUrl: postgres.url,
      workers,
      banner,
      request: (method, path, body) => request(api, method, path, body),
    });
  } else {
    await seedStory(api, workers);
  }
  if (keep) {
    console.log(
      `\n--keep: everything stays up. API ${api}, run pages ${api}/ui, Bull Board ${api}/admin/queues. Ctrl-C to stop.`,
    );
    await new Promise((resolve) => process.once('SIGINT', resolve));
  }
}

/** The seed's story: SIGKILL the worker holding the research team after its first checkpoint; the other finishes it. */
async function seedStory(api: string, workers: AppProcess[]): Promise<void> {
  banner('STEP 1: enqueue the research team with checkpoint "tool-batch"');
  const created = await request<{ run_id: string; session_id: string; status: string }>(
    api,
    'POST',
    '/v1/teams/research-team/runs',
    {
      input: "Research the topic 'cairn checkpointing'.",
      session_id: 'team-crash-demo-session',
      checkpoint: 'tool-batch',
    },
  );
  console.log(`POST /v1/teams/research-team/runs -> 202 ${JSON.stringify(created)}`);
  const runId = created.run_id;
  // The model text of the team and of its researcher, printed as it streams (the scripted models stream word by word).
  const liveText = printLiveText(api, runId, terminal).catch((error: unknown) =>
    terminal.line(`[live] stream ended: ${(error as Error).message}`),
  );
  const getRun = () => request<RunView>(api, 'GET', `/v1/runs/${runId}`);

  banner('STEP 2: wait for the first RUNNING checkpoint, then SIGKILL the worker holding the run');
  let run = await getRun();
  while (!hasCheckpoint(run)) {
    narrator.observe(run);
    if (run.status !== 'RUNNING' && run.status !== 'PENDING')
      throw new Error(`run ended ${run.status} before any checkpoint`);
    await sleep(100);
    run = await getRun();
  }
  narrator.observe(run);
  const holderId = run.attempts.find((a) => a.ended_at === null)?.worker_id;
  const holder = workers.find((w) => w.name === holderId);
  if (!holder) throw new Error(`no demo worker holds the run (holder: ${holderId})`);
  const survivor = workers.find((w) => w !== holder)!;
  holder.kill('SIGKILL');
  const killedAt = Date.now();
  await holder.exited;
  narrator.say(
    `>>> SIGKILL ${holder.name} (pid ${holder.proc.pid}): a hard crash, no cleanup, no /continue`,
  );
  terminal.line('\nWhat survived in Postgres:');
  terminal.line(describeRun(await getRun()));

  banner(`STEP 3: stalled-job detection hands the run to ${survivor.name}`);
  let recoveredAfter: number | undefined;
  for (;;) {
    run = await getRun();
    narrator.observe(run);
    if (recoveredAfter === undefined && run.attempts.some((a) => a.reason === 'recovered')) {
      recoveredAfter = Date.now() - killedAt;
      narrator.say(
        `resumed ${(recoveredAfter / 1000).toFixed(1)} s after the kill, from the last checkpoint`,
      );
    }
    if (FINAL_STATUSES.includes(run.status)) break;
    if (Date.now() - killedAt > 60_000)
      throw new Error('the run did not finish within 60 s of the kill');
    await sleep(100);
  }

  await liveText;
  banner('RESULT');
  console.log(describeRun(run));
  console.log(`\nFinal answer:\n${run.content}`);
  const sameRun = run.run_id === runId;
  const recovered = run.attempts.some(
    (a) => a.reason === 'recovered' && a.worker_id === survivor.name,
  );
  console.log(
    `\nSame run_id: ${sameRun}. Finished by ${survivor.name} after stalled-job detection: ${recovered}.` +
      (recoveredAfter !== undefined
        ? ` Recovery took ${(recoveredAfter / 1000).toFixed(1)} s.`
        : ''),
  );
  if (run.status !== 'COMPLETED' || !sameRun || !recovered)
    throw new Error('the demo did not end as expected');
}

function hasCheckpoint(run: RunView): boolean {
  const checkpointed = (r: RunView): boolean =>
    (r.status === 'RUNNING' && r.last_checkpoint_at_message_index > 0) ||
    r.member_runs.some(checkpointed);
  return run.status === 'RUNNING' && checkpointed(run);
}

async function request<T>(api: string, method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${api}${path}`, {
    method,
    headers: body ? { 'content-type': 'application/json' } : undefined,
    body: body ? JSON.stringify(body) : undefined,
  });
  if (!response.ok)
    throw new Error(`${method} ${path} -> ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

function redact(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '***';
  return parsed.toString();
}

async function shutdown(): Promise<void> {
  for (const p of processes) if (p.alive) p.kill('SIGTERM');
  await Promise.all(processes.map((p) => Promise.race([p.exited, sleep(5000)])));
  for (const p of processes) if (p.alive) p.kill('SIGKILL');
  for (const stop of stops.reverse()) await stop();
}

try {
  await main();
  await shutdown();
} catch (error) {
  console.error(`\nDemo failed: ${(error as Error).message}\nLogs: ${logDir}`);
  await shutdown();
  process.exitCode = 1;
}
