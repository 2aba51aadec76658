import {
  loadRegistry,
  modelFromSpec,
  RunQueue,
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
export async function startWorkerProcess(config: CairnEnvConfig, logger: WorkerLogger): Promise<WorkerProcess> {
  const model = modelFromSpec(config);
  const registry = await loadRegistry(config.registryModule, model);
  const db = createDb(config.databaseUrl, { max: Math.max(10, config.workerConcurrency + 4) });
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
  const worker = startRunWorker({
    runQueue,
    store,
    registry,
    model,
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
    { workerId: config.workerId, backend: runQueue.backend, queue: runQueue.name, concurrency: config.workerConcurrency, model: config.model },
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
