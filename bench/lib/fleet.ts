import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { REPO_ROOT, tsNodeArgs } from './child.js';

/** The worker app's entry, run from sources as `npm run worker` does. */
export const WORKER_MAIN = 'apps/worker/src/main.ts';
/** The benchmark registry module, for `CAIRN_REGISTRY` (a path: a bare name would be taken for a package). */
export const BENCH_REGISTRY = join(REPO_ROOT, 'bench/lib/bench-registry.ts');

/** How a worker process is configured (its environment). */
export interface WorkerConfig {
  databaseUrl: string;
  backend: 'redis' | 'postgres';
  redisUrl?: string;
  workerId: string;
  queueName: string;
  concurrency?: number;
  lockMs?: number;
  stalledIntervalMs?: number;
  /** Extra environment (`BENCH_TOOL_MS`, `LOG_LEVEL`, ...). */
  env?: Record<string, string>;
  /** Entry script; a `.js` file runs on plain node, a `.ts` file with the tsx loader. @defaultValue {@link WORKER_MAIN} */
  script?: string;
  /** `CAIRN_REGISTRY`. @defaultValue {@link BENCH_REGISTRY} */
  registry?: string;
  /** Extra node flags (`--cpu-prof`, ...). @defaultValue `BENCH_NODE_FLAGS`, split on spaces */
  nodeFlags?: string[];
  /** `CAIRN_EXECUTION_THREADS` (0: runs execute on the main thread). @defaultValue the worker's default */
  executionThreads?: number;
}

/** A worker process the benchmark started. */
export interface WorkerHandle {
  workerId: string;
  pid: number;
  child: ChildProcess;
  /** Resolves when the worker logged that it started. */
  ready: Promise<void>;
  /** Last lines of its output, for error messages. */
  tail(): string;
  /** SIGKILL, resolved once it exited. */
  kill(): Promise<void>;
  /** SIGTERM (graceful), SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

/** A worker variable from the config, else from a `BENCH_*` override (to benchmark other settings), else unset (the worker's default). */
function optional(
  name: string,
  value: number | undefined,
  override: string,
): Record<string, string> {
  const chosen = value === undefined ? process.env[override] : String(value);
  return chosen === undefined ? {} : { [name]: chosen };
}

/** The worker settings the benchmark overrides through `BENCH_*` variables, for notes; "defaults" when none. */
export function executionMode(): string {
  const overrides = [
    ['CAIRN_EXECUTION_THREADS', 'BENCH_EXECUTION_THREADS'],
    ['CAIRN_LOCK_MS', 'BENCH_LOCK_MS'],
    ['CAIRN_STALLED_INTERVAL_MS', 'BENCH_STALLED_INTERVAL_MS'],
  ].flatMap(([name, env]) =>
    process.env[env!] === undefined ? [] : [`${name}=${process.env[env!]}`],
  );
  return overrides.length
    ? `overridden: ${overrides.join(', ')}`
    : "the worker's defaults for execution threads, lock and stalled interval";
}

const READY = /"msg":"worker started"|worker ready/;

/** Starts one worker process with `config`; `ready` rejects if it exits first or takes over 60 s. */
export function startWorker(config: WorkerConfig): WorkerHandle {
  const env: Record<string, string | undefined> = {
    ...process.env,
    DATABASE_URL: config.databaseUrl,
    REDIS_URL: config.backend === 'redis' ? config.redisUrl : undefined,
    CAIRN_QUEUE_BACKEND: config.backend,
    CAIRN_QUEUE_NAME: config.queueName,
    CAIRN_REGISTRY: config.registry ?? BENCH_REGISTRY,
    CAIRN_MODEL: 'scripted',
    CAIRN_WORKER_ID: config.workerId,
    WORKER_CONCURRENCY: String(config.concurrency ?? 10),
    LOG_LEVEL: 'info',
    ...optional('CAIRN_LOCK_MS', config.lockMs, 'BENCH_LOCK_MS'),
    ...optional('CAIRN_STALLED_INTERVAL_MS', config.stalledIntervalMs, 'BENCH_STALLED_INTERVAL_MS'),
    ...optional('CAIRN_EXECUTION_THREADS', config.executionThreads, 'BENCH_EXECUTION_THREADS'),
    ...config.env,
  };
  const script = config.script ?? WORKER_MAIN;
  const nodeFlags = config.nodeFlags ?? process.env.BENCH_NODE_FLAGS?.split(/\s+/).filter(Boolean);
  const args = script.endsWith('.js')
    ? [...(nodeFlags ?? []), script]
    : tsNodeArgs(script, nodeFlags);
  const child = spawn(process.execPath, args, {
    cwd: REPO_ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const killOnExit = () => child.kill('SIGKILL');
  process.on('exit', killOnExit);
  const exited = once(child, 'exit').finally(() => process.removeListener('exit', killOnExit));
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () =>
        reject(new Error(`worker ${config.workerId} not ready after 60 s: ${output.slice(-800)}`)),
      60_000,
    );
    const onData = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-8000);
      if (READY.test(output)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    void exited.then(() => {
      clearTimeout(timer);
      reject(
        new Error(`worker ${config.workerId} exited before it was ready: ${output.slice(-800)}`),
      );
    });
  });
  ready.catch(() => undefined);
  const alive = () => child.exitCode === null && child.signalCode === null;
  return {
    workerId: config.workerId,
    pid: child.pid!,
    child,
    ready,
    tail: () => output.slice(-1500),
    kill: async () => {
      if (alive()) child.kill('SIGKILL');
      await exited;
    },
    stop: async (graceMs = 10_000) => {
      if (!alive()) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Stops every worker in `workers` (gracefully, in parallel). */
export async function stopAll(workers: readonly WorkerHandle[]): Promise<void> {
  await Promise.all(workers.map((w) => w.stop()));
}
