import { Worker } from 'node:worker_threads';
import { deserializeError } from '@cairn/engine/lifecycle';
import { ConfigError } from '../errors.js';
import type { RunObserver } from '../metrics/run-observation.js';
import { SILENT_LOGGER, type WorkerLogger } from '../worker-logger.js';
import type { RunExecutor } from './run-executor.js';
import type { RunJobOutcome, RunJobRequest } from './run-job.js';
import type { ExecutionThreadConfig, FromThread, ToThread } from './thread-protocol.js';

/** Options of {@link createThreadExecutor}. */
export interface ThreadExecutorOptions {
  /** What every thread connects to and loads. */
  config: ExecutionThreadConfig;
  /** @defaultValue 1 */
  threads?: number;
  logger?: WorkerLogger;
  /** Receives the measurements the threads post about their runs' work (the worker's metrics). */
  observe?: RunObserver;
  /** A thread died unexpectedly: its runs are lost to this process (other workers recover them). */
  onThreadDeath?: (error: Error) => void;
  /**
   * A thread whose event loop has not answered for this long (a tool spinning
   * forever) is declared dead, so that its runs can move to another worker.
   * @defaultValue 300_000
   */
  unresponsiveAfterMs?: number;
}

/** How often the main thread checks that each execution thread still answers. */
const PING_INTERVAL_MS = 5_000;

interface Pending<T> {
  resolve(value: T): void;
  reject(error: Error): void;
}

/** One execution thread and what it has in flight. */
class ExecutionThread {
  readonly executions = new Map<number, Pending<RunJobOutcome>>();
  readonly ready: Promise<void>;
  /** Resolves when the thread said it closed, or exited. */
  private readonly closedSignal: Promise<void>;
  private closed?: Promise<void>;
  private closing = false;
  private nextId = 1;
  /** When the thread last answered a ping. */
  lastPong = Date.now();

  constructor(
    private readonly worker: Worker,
    logger: WorkerLogger,
    onDeath: (error: Error) => void,
    observe: RunObserver,
  ) {
    let resolveClosed: () => void = () => undefined;
    this.closedSignal = new Promise<void>((resolve) => (resolveClosed = resolve));
    this.ready = new Promise((resolve, reject) => {
      worker.on('message', (message: FromThread) => {
        switch (message.type) {
          case 'ready':
            return resolve();
          case 'init-failed':
            return reject(new Error(`execution thread could not start: ${message.message}`));
          case 'outcome':
            this.settle(this.executions, message.id, (p) => p.resolve(message.outcome));
            return;
          case 'failed': {
            const error = deserializeError(message.error);
            this.settle(this.executions, message.id, (p) => p.reject(error));
            return;
          }
          case 'pong':
            this.lastPong = Date.now();
            return;
          case 'log':
            logger[message.level](message.fields, message.message);
            return;
          case 'observation':
            observe(message.observation);
            return;
          case 'closed':
            resolveClosed();
            return;
        }
      });
      worker.on('error', (error) => reject(error));
      worker.on('exit', (code) => {
        resolveClosed();
        if (this.closing) return;
        const error = new Error(`execution thread exited unexpectedly (code ${code})`);
        reject(error);
        for (const pending of this.executions.values()) pending.reject(error);
        this.executions.clear();
        onDeath(error);
      });
    });
  }

  execute(request: RunJobRequest): Promise<RunJobOutcome> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.executions.set(id, { resolve, reject });
      this.send({ type: 'execute', id, request });
    });
  }

  send(message: ToThread): void {
    this.worker.postMessage(message);
  }

  close(): Promise<void> {
    this.closed ??= (async () => {
      this.closing = true;
      this.send({ type: 'close' });
      await this.closedSignal;
      await this.worker.terminate();
    })();
    return this.closed;
  }

  private settle<T>(
    map: Map<number, Pending<T>>,
    id: number,
    settle: (pending: Pending<T>) => void,
  ): void {
    const pending = map.get(id);
    if (!pending) return;
    map.delete(id);
    settle(pending);
  }
}

/** Starts an execution thread from the module next to this file. */
function startThread(config: ExecutionThreadConfig): Worker {
  const fromSources = import.meta.url.endsWith('.ts');
  const entry = new URL(
    fromSources ? './execution-thread.ts' : './execution-thread.js',
    import.meta.url,
  );
  if (!fromSources && !TYPESCRIPT_FILE.test(config.registryModule))
    return new Worker(entry, { workerData: config });
  // Node 20 does not give worker threads the loader hooks of the parent's `--import tsx` (this
  // repository's sources, or an app run with tsx whose registry module is TypeScript), so the
  // thread registers tsx first.
  const code = `import(${JSON.stringify(tsxApi(config.registryModule))}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry.href)}); });`;
  return new Worker(code, { eval: true, workerData: config });
}

const TYPESCRIPT_FILE = /\.[cm]?tsx?$/;

function tsxApi(registryModule: string): string {
  try {
    return import.meta.resolve('tsx/esm/api');
  } catch {
    throw new ConfigError(
      'CAIRN_REGISTRY',
      `"${registryModule}" is TypeScript: install tsx beside it (npm install tsx) or point at its compiled JavaScript`,
    );
  }
}

/**
 * Executes runs in a pool of worker threads, each with its own engine and
 * Postgres pool; the main thread keeps only BullMQ, so lock renewal goes on
 * while a tool blocks an execution thread's event loop.
 */
export async function createThreadExecutor(options: ThreadExecutorOptions): Promise<RunExecutor> {
  const logger = options.logger ?? SILENT_LOGGER;
  const onDeath =
    options.onThreadDeath ?? ((error) => logger.error({ err: error }, 'execution thread died'));
  const threads = Array.from(
    { length: Math.max(1, options.threads ?? 1) },
    () =>
      new ExecutionThread(
        startThread(options.config),
        logger,
        onDeath,
        options.observe ?? (() => undefined),
      ),
  );
  try {
    await Promise.all(threads.map((t) => t.ready));
  } catch (error) {
    await Promise.allSettled(threads.map((t) => t.close()));
    throw error;
  }
  const unresponsiveAfterMs = options.unresponsiveAfterMs ?? 300_000;
  const watchdog = setInterval(
    () => {
      for (const thread of threads) {
        if (Date.now() - thread.lastPong > unresponsiveAfterMs) {
          onDeath(new Error(`an execution thread has not answered for ${unresponsiveAfterMs} ms`));
          thread.lastPong = Date.now();
        }
        thread.send({ type: 'ping' });
      }
    },
    Math.min(PING_INTERVAL_MS, unresponsiveAfterMs / 2),
  );
  watchdog.unref();
  const leastBusy = () => threads.reduce((a, b) => (b.executions.size < a.executions.size ? b : a));
  return {
    execute: (request) => ({ outcome: leastBusy().execute(request) }),
    handoverAll: () => {
      for (const thread of threads) thread.send({ type: 'handover-all' });
    },
    close: async () => {
      clearInterval(watchdog);
      await Promise.all(threads.map((t) => t.close()));
    },
  };
}
