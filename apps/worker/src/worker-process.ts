import {
  createInlineExecutor,
  createLivePublisher,
  createThreadExecutor,
  loadRegistry,
  modelFromSpec,
  RunQueue,
  type RunExecutor,
  ServiceUnreachableError,
  startReconciler,
  startRunWorker,
  type CairnEnvConfig,
  type WorkerLogger,
} from '@cairn/queue';
import { createDb, migrate, PostgresCheckpointStore } from '@cairn/store';

/** A running worker process: the run worker and its reconciler. */
export interface WorkerProcess {
  /** Graceful shutdown: hands running jobs back, then closes every connection. */
  close(): Promise<void>;
}

/**
 * Wires a worker from its configuration: Postgres store, run queue, registry,
 * BullMQ run worker and periodic reconciler. Throws `ServiceUnreachableError`
 * naming Redis or Postgres when one is down at start.
 */
export async function startWorkerProcess(
  config: CairnEnvConfig,
  logger: WorkerLogger,
  onFatal: (error: Error) => void,
): Promise<WorkerProcess> {
  // In thread mode the main thread only checks the store at start and reconciles.
  const mainPoolSize = config.executionThreads === 0 ? config.workerConcurrency + 4 : 4;
  const db = createDb(config.databaseUrl, { max: mainPoolSize });
  try {
    await (config.migrate ? migrate(db) : db.selectFrom('runs').select('run_id').limit(1).execute());
  } catch (cause) {
    await db.destroy();
    const code = (cause as { code?: unknown }).code;
    if (code === '42P01') throw new Error('the store has no tables: run `npm run migrate` (or set CAIRN_MIGRATE=1)');
    throw new ServiceUnreachableError('Postgres', config.databaseUrl, { cause });
  }
  let runQueue: RunQueue;
  try {
    runQueue = await RunQueue.open({
      backend: config.queueBackend,
      redisUrl: config.redisUrl,
      databaseUrl: config.databaseUrl,
      queueName: config.queueName,
      prefix: config.queuePrefix,
    });
  } catch (error) {
    await db.destroy();
    throw error;
  }
  const store = new PostgresCheckpointStore(db);
  let executor: RunExecutor;
  try {
    executor = await createExecutor(config, store, logger, onFatal);
  } catch (error) {
    await runQueue.close();
    await db.destroy();
    throw error;
  }
  const worker = startRunWorker({
    runQueue,
    executor,
    workerId: config.workerId,
    concurrency: config.workerConcurrency,
    lockDurationMs: config.lockMs,
    stalledIntervalMs: config.stalledIntervalMs,
    logger,
  });
  const reconciler = startReconciler({
    store,
    runQueue,
    intervalMs: config.reconcileIntervalMs,
    olderThanMs: config.reconcileAfterMs,
    logger,
  });
  logger.info(
    {
      backend: runQueue.backend,
      queue: runQueue.name,
      concurrency: config.workerConcurrency,
      executionThreads: config.executionThreads,
      model: config.model,
    },
    'worker started',
  );
  return {
    close: async () => {
      await reconciler.stop();
      await worker.close();
      await runQueue.close();
      await db.destroy();
    },
  };
}

/** Execution threads (the default), or the main thread when `CAIRN_EXECUTION_THREADS=0`. */
async function createExecutor(
  config: CairnEnvConfig,
  store: PostgresCheckpointStore,
  logger: WorkerLogger,
  onFatal: (error: Error) => void,
): Promise<RunExecutor> {
  const leaseCheckMs = Math.max(100, Math.floor(config.lockMs / 2));
  if (config.executionThreads === 0) {
    const model = modelFromSpec(config);
    return createInlineExecutor({
      store,
      registry: await loadRegistry(config.registryModule, model),
      workerId: config.workerId,
      model,
      leaseCheckMs,
      logger,
      live: createLivePublisher({
        backend: config.queueBackend,
        redisUrl: config.redisUrl,
        databaseUrl: config.databaseUrl,
        onError: (error) => logger.debug({ err: error }, 'could not publish a live event'),
      }),
    });
  }
  return createThreadExecutor({
    threads: config.executionThreads,
    logger,
    onThreadDeath: onFatal,
    config: {
      databaseUrl: config.databaseUrl,
      registryModule: config.registryModule,
      model: config.model,
      openaiApiKey: config.openaiApiKey,
      openaiBaseUrl: config.openaiBaseUrl,
      workerId: config.workerId,
      leaseCheckMs,
      backend: config.queueBackend,
      redisUrl: config.redisUrl,
      dbPoolMax: Math.max(4, Math.ceil(config.workerConcurrency / config.executionThreads) + 2),
    },
  });
}
