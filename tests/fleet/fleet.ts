import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRegistry } from '@cairn/research-team';
import type { Registry } from '@cairn/engine';
// The service alone: the package's index also loads the HTTP app, its pages and Bull Board.
import { ProducerService } from '../../apps/producer/src/producer-service.js';
import { loadRegistry, type QueueBackendKind } from '@cairn/runtime';
import {
  LOG_WAIT_MS,
  freePort,
  spawnApp,
  testQueueBackend,
  testRedisUrl,
  type AppProcess,
  type TestDatabase,
} from '@cairn/services';
import { createDb, PostgresCheckpointStore, type RunView } from '@cairn/store';
import { migratedTestDatabase } from '../../packages/store/src/test-support/migrated-test-database.js';
import { waitFor } from '../helpers/wait-for.js';

/** Both queue backends, for scenarios that run on each (the Redis one is skipped without a Redis). */
export const QUEUE_BACKENDS = ['redis', 'postgres'] as const satisfies readonly QueueBackendKind[];

/** The backend of scenarios that run once: Redis when the test run has one, else BullMQ's PostgreSQL backend. */
export const FLEET_BACKEND: QueueBackendKind = testQueueBackend();

/** A worker process spawned for a test; `id` is its worker id. */
export type SpawnedWorker = AppProcess & { id: string };

/** A producer process spawned for a test, serving at `baseUrl`. */
export type SpawnedProducer = AppProcess & { baseUrl: string; port: number };

/** Options of {@link startFleet}. */
export interface FleetOptions {
  backend: QueueBackendKind;
  toolDelayMs?: number;
  lockMs?: number;
  stalledIntervalMs?: number;
  /** `CAIRN_REGISTRY` of the workers and the client. @defaultValue the research team */
  registryModule?: string;
  /** The Redis of the redis backend. @defaultValue the test run's */
  redisUrl?: string;
  /** `redisUrl` names Redis Cluster nodes (`CAIRN_REDIS_CLUSTER=1` for the workers). @defaultValue false */
  redisCluster?: boolean;
  /** The client's registry, when the workers' differs from `registryModule`'s (a `CAIRN_MODEL` override). */
  registry?: Registry;
  /** `CAIRN_TENANT_WEIGHTS` of the client (it enqueues the runs) and of the processes, e.g. `{ acme: 3 }`. @defaultValue every tenant 1 */
  tenantWeights?: Record<string, number>;
}

/** One test's database, queue, client and worker processes. */
export interface Fleet {
  client: ProducerService;
  /** The whole store on the fleet's database, on a pool of the test's own: for a test's direct reads, writes and SQL. */
  store: PostgresCheckpointStore;
  db: TestDatabase;
  dir: string;
  ledgerFile: string;
  workers: SpawnedWorker[];
  spawnWorker(name: string, env?: Record<string, string>): Promise<SpawnedWorker>;
  /** Starts `npm run producer` on this fleet's database and queue (on `port` when given, e.g. to restart one). */
  spawnProducer(
    name: string,
    options?: { port?: number; env?: Record<string, string> },
  ): Promise<SpawnedProducer>;
  ledger(): Map<string, number>;
  /** True when the run has a waiting, delayed or active job. */
  runQueueLiveJob(runId: string): Promise<boolean>;
  /** SIGKILLs the workers still running and forgets them all, resetting a fleet the tests of a file share (name later workers anew: a name's log is appended to). */
  stopWorkers(): Promise<void>;
  stop(): Promise<void>;
}

/** Starts a fresh database (migrated), a queue with a unique name, and a client; workers are spawned on demand. */
export async function startFleet(options: FleetOptions): Promise<Fleet> {
  const db = await migratedTestDatabase();
  const dir = mkdtempSync(join(tmpdir(), 'cairn-fleet-'));
  const ledgerFile = join(dir, 'ledger.tsv');
  const queueName = `test-${randomUUID()}`;
  const redisUrl = options.backend === 'redis' ? (options.redisUrl ?? testRedisUrl()) : undefined;
  const redisCluster = options.redisCluster ?? false;
  const client = await ProducerService.connect({
    databaseUrl: db.url,
    queue: {
      backend: options.backend,
      redisUrl,
      redisCluster,
      queueName,
      tenantWeights: options.tenantWeights,
    },
    registry:
      options.registry ??
      (options.registryModule ? await loadRegistry(options.registryModule) : createRegistry()),
    migrate: true,
  });
  const store = new PostgresCheckpointStore(createDb(db.url));
  const workers: SpawnedWorker[] = [];
  const producers: SpawnedProducer[] = [];
  const baseEnv: Record<string, string> = {
    DATABASE_URL: db.url,
    CAIRN_QUEUE_BACKEND: options.backend,
    CAIRN_QUEUE_NAME: queueName,
    RESEARCH_TOOL_DELAY_MS: String(options.toolDelayMs ?? 300),
    CAIRN_TOOL_LEDGER: ledgerFile,
    CAIRN_LOCK_MS: String(options.lockMs ?? 2000),
    CAIRN_STALLED_INTERVAL_MS: String(options.stalledIntervalMs ?? 500),
    WORKER_CONCURRENCY: '4',
    ...(options.registryModule ? { CAIRN_REGISTRY: options.registryModule } : {}),
    LOG_LEVEL: 'debug',
    ...(redisUrl ? { REDIS_URL: redisUrl } : {}),
    ...(redisCluster ? { CAIRN_REDIS_CLUSTER: '1' } : {}),
    ...(options.tenantWeights && {
      CAIRN_TENANT_WEIGHTS: Object.entries(options.tenantWeights)
        .map(([tenant, weight]) => `${tenant}:${weight}`)
        .join(','),
    }),
  };
  const spawnWorker = async (name: string, env: Record<string, string> = {}) => {
    const worker: SpawnedWorker = Object.assign(
      spawnApp('worker', {
        name,
        logFile: join(dir, `${name}.log`),
        env: {
          REDIS_URL: undefined,
          CAIRN_MODEL: undefined,
          OPENAI_API_KEY: undefined,
          ...baseEnv,
          CAIRN_WORKER_ID: name,
          ...env,
        },
      }),
      { id: name },
    );
    workers.push(worker);
    await worker.waitForLog('worker started', LOG_WAIT_MS);
    return worker;
  };
  const spawnProducer = async (
    name: string,
    { port, env = {} }: { port?: number; env?: Record<string, string> } = {},
  ) => {
    const listenPort = port ?? (await freePort());
    const producer: SpawnedProducer = Object.assign(
      spawnApp('producer', {
        name,
        logFile: join(dir, `${name}.log`),
        env: {
          REDIS_URL: undefined,
          CAIRN_MODEL: undefined,
          OPENAI_API_KEY: undefined,
          ...baseEnv,
          PORT: String(listenPort),
          ...env,
        },
      }),
      { baseUrl: `http://127.0.0.1:${listenPort}`, port: listenPort },
    );
    producers.push(producer);
    await producer.waitForLog('producer listening', LOG_WAIT_MS);
    return producer;
  };
  const killAll = async (processes: readonly AppProcess[]) => {
    for (const p of processes) {
      if (p.alive) {
        p.proc.kill('SIGCONT');
        p.proc.kill('SIGKILL');
      }
    }
    await Promise.all(processes.map((p) => p.exited));
  };
  return {
    client,
    store,
    db,
    dir,
    ledgerFile,
    workers,
    spawnWorker,
    spawnProducer,
    ledger: () => {
      const counts = new Map<string, number>();
      if (!existsSync(ledgerFile)) return counts;
      for (const line of readFileSync(ledgerFile, 'utf8').split('\n').filter(Boolean)) {
        const key = line.split('\t')[1]!;
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
      return counts;
    },
    runQueueLiveJob: async (runId) => (await client.runQueue.liveJobFor(runId)) !== undefined,
    stopWorkers: async () => {
      await killAll(workers);
      workers.length = 0;
    },
    stop: async () => {
      await killAll([...workers, ...producers]);
      await client.close();
      await store.db.destroy();
      await db.drop();
      if (!process.env.CAIRN_KEEP_FLEET_LOGS) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The suite's one wait, for the fleet tests that import it from here. */
export { waitFor };

/** The worker id of the run's open attempt. */
export function holderOf(view: RunView | undefined): string | undefined {
  return view?.attempts.find((a) => a.ended_at === null)?.worker_id;
}

/** The worker holding the team run once its first member run has committed its first tool batch (message index 3). */
export async function holderAfterMemberCheckpoint(
  fleet: Fleet,
  runId: string,
): Promise<SpawnedWorker> {
  let holder: string | undefined;
  await waitFor(
    async () => {
      const view = await fleet.client.getRun(runId);
      holder = holderOf(view);
      return (
        holder !== undefined && (view?.member_runs[0]?.last_checkpoint_at_message_index ?? 0) >= 3
      );
    },
    20_000,
    "the member's first checkpoint",
  );
  return fleet.workers.find((w) => w.id === holder)!;
}

/** Every tool call of the run and its member runs. */
export function allTools(view: RunView): RunView['tools'] {
  return [...view.tools, ...view.member_runs.flatMap(allTools)];
}

/** The team run the tests enqueue. */
export const TEAM = { kind: 'team', name: 'research-team' } as const;
/** The agent run the tests enqueue. */
export const RESEARCHER = { kind: 'agent', name: 'researcher' } as const;
