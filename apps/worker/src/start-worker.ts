import {
  mergeModelPrices,
  Registry,
  type CapacitySettings,
  type EntityRef,
  type Model,
  type ModelPrices,
} from '@cairn/engine';
import {
  RunQueue,
  startCapacityLine,
  startReconciler,
  startRunWorker,
  startWebhookDelivery,
} from '@cairn/queue';
import {
  CairnMetrics,
  capacitySettingsOf,
  ConfigError,
  createConfiguredExecutor,
  createThreadExecutor,
  leaseCheckMsFor,
  loadRegistryModule,
  modelFromSpec,
  openModelCapacity,
  openStoreDb,
  queueConnectionOf,
  resolveEnvConfig,
  startRetention,
  startSearchChunks,
  startMetricsServer,
  type CairnEnvConfig,
  type ExecutorSettings,
  type RunExecutor,
  type WorkerLogger,
} from '@cairn/runtime';
import {
  openStore,
  PostgresWebhookStore,
  ServedEntityCatalog,
  type StoreWrites,
} from '@cairn/store';
import { pino } from 'pino';
import { startEntityHeartbeat } from './entity-heartbeat.js';

/** What {@link startWorker} takes: any field of the environment's configuration, and the registry. */
export interface StartWorkerOptions extends Partial<Omit<CairnEnvConfig, 'registryModule'>> {
  /**
   * The agents and teams this worker serves. A module (path, package name or
   * `file:` URL) exporting `createRegistry({ model? })` is loaded by each
   * execution thread, so a tool that blocks its event loop cannot stop this
   * thread from renewing job locks. A `Registry` object cannot cross into a
   * thread: runs then execute in this thread (`executionThreads` 0).
   */
  registry: Registry | string | URL;
  /**
   * The app's context every tool receives as `ctx.context` (typed by
   * `tool<Ctx>()`). It cannot cross into execution threads: with a registry
   * module, export `createContext()` from it instead (each thread calls it).
   */
  context?: unknown;
  /** Where the worker logs. @defaultValue pino on stdout at `logLevel`, with the worker id */
  logger?: WorkerLogger;
  /**
   * Called when an execution thread dies. Its runs are recovered by other
   * workers (stalled-job detection); a supervisor should restart this one.
   * @defaultValue log it and exit the process with code 1
   */
  onFatal?: (error: Error) => void;
  /** Read for every field not given. @defaultValue process.env */
  env?: NodeJS.ProcessEnv;
}

/** A running worker: its run worker, reconciler and entity heartbeat. */
export interface CairnWorker {
  /** The worker id shown in every attempt it claims. */
  readonly id: string;
  /** The configuration it runs with. */
  readonly config: CairnEnvConfig;
  /** Graceful shutdown: hands running jobs back, then closes every connection. */
  close(): Promise<void>;
}

/**
 * Starts a worker in this process: Postgres store, run queue, registry,
 * BullMQ run worker, periodic reconciler, and the record of the entities it
 * serves (which producers validate names against). Options default to the
 * environment (`DATABASE_URL`, `REDIS_URL`, ...). Throws `ConfigError`
 * naming a bad option, `ServiceUnreachableError` naming Redis or Postgres,
 * `StoreNotMigratedError` (naming `npm run migrate`) when migrations are pending.
 *
 * @example
 * ```ts
 * const worker = await startWorker({ registry: new URL('./registry.js', import.meta.url), databaseUrl, redisUrl });
 * process.once('SIGTERM', () => void worker.close());
 * ```
 */
export async function startWorker(options: StartWorkerOptions): Promise<CairnWorker> {
  const {
    registry: registrySource,
    context: givenContext,
    logger: givenLogger,
    onFatal: givenOnFatal,
    env,
    ...overrides
  } = options;
  const inMainThread = Registry.isRegistry(registrySource);
  if (inMainThread && (overrides.executionThreads ?? 0) > 0) {
    throw new ConfigError(
      'executionThreads',
      'a Registry object cannot cross into execution threads: pass `registry` as the module that exports createRegistry',
    );
  }
  if (!inMainThread && !(typeof registrySource === 'string' || registrySource instanceof URL)) {
    throw new ConfigError(
      'registry',
      'must be a Registry or the module (path or URL) exporting createRegistry',
    );
  }
  const config = resolveEnvConfig(
    {
      ...overrides,
      ...(inMainThread ? { executionThreads: 0 } : {}),
    },
    env,
  );
  const registryModule = inMainThread ? undefined : String(registrySource);
  if (givenContext !== undefined && registryModule !== undefined && config.executionThreads > 0) {
    throw new ConfigError(
      'context',
      'cannot cross into execution threads: export createContext() from the registry module, or pass a Registry (or executionThreads: 0)',
    );
  }
  const logger =
    givenLogger ?? pino({ level: config.logLevel, base: { workerId: config.workerId } });
  const onFatal =
    givenOnFatal ??
    ((error: Error) => {
      logger.error({ err: error }, 'an execution thread died: exiting');
      process.exit(1);
    });
  const model = modelFromSpec(config, logger);
  // With execution threads, each thread builds the module's context itself; this thread needs only the entities.
  // Loading the module checks its `modelLimits` too: a malformed entry refuses the start, named.
  const loaded = inMainThread
    ? { registry: registrySource, context: undefined, modelLimits: [], modelPrices: new Map() }
    : await loadRegistryModule(registryModule!, model);
  const { registry } = loaded;
  const context = givenContext ?? loaded.context;

  // In thread mode the main thread only checks the store at start and reconciles.
  const mainPoolSize = config.executionThreads === 0 ? config.workerConcurrency + 4 : 4;
  const db = await openStoreDb(config.databaseUrl, {
    migrate: config.migrate,
    max: mainPoolSize,
    namedStatements: config.namedStatements,
  });
  const closers: (() => Promise<void> | void)[] = [() => db.destroy()];
  let closing: Promise<void> | undefined;
  const closeAll = () =>
    (closing ??= (async () => {
      for (const close of [...closers].reverse()) await close();
    })());
  try {
    const heartbeat = await startEntityHeartbeat({
      catalog: new ServedEntityCatalog(db),
      registry,
      workerId: config.workerId,
      logger,
    });
    closers.push(() => heartbeat.stop());
    const runQueue = await RunQueue.open({
      ...queueConnectionOf(config),
      tenantWeights: config.tenantWeights,
    });
    closers.push(() => runQueue.close());
    const { writes, reads, ops } = openStore(db);
    const limiter = openModelCapacity({
      backend: config.queueBackend,
      redisUrl: config.redisUrl,
      redisCluster: config.redisCluster,
      queueName: config.queueName,
      queuePrefix: config.queuePrefix,
      store: ops,
    });
    closers.push(() => limiter.close());
    const capacity = capacitySettingsOf(
      limiter.capacity,
      config,
      loaded.modelLimits,
      (error: unknown) =>
        logger.debug({ err: error }, 'model capacity: a release or renewal failed'),
    );
    const metrics = new CairnMetrics({
      queues: [runQueue.queue],
      countPausedRuns: () => reads.countRunsByStatus('PAUSED'),
      modelCapacity: limiter.capacity,
    });
    if (config.metricsPort !== undefined) {
      const server = await startMetricsServer(metrics, config.metricsPort);
      closers.push(() => server.close());
      logger.info({ port: server.port }, 'metrics listening');
    }
    const executor = await createExecutor({
      config,
      store: writes,
      registry,
      registryModule,
      context,
      model,
      logger,
      onFatal,
      metrics,
      capacity,
      prices: mergeModelPrices(loaded.modelPrices, new Map(Object.entries(config.modelPrices))),
    });
    const worker = startRunWorker({
      runQueue,
      executor,
      workerId: config.workerId,
      concurrency: config.workerConcurrency,
      lockDurationMs: config.lockMs,
      stalledIntervalMs: config.stalledIntervalMs,
      deathSignal: config.deathSignal,
      logger,
      ...(config.capacityLine && {
        capacity,
        // A run's first model request is its entity's own (a team's lead), on CAIRN_MODEL when it replaces them.
        modelOf: (ref: EntityRef) =>
          registry.has(ref) ? (model ?? registry.get(ref).model).name : undefined,
        parkedAgain: (runId, waiting) => ops.recordParkedAgain(runId, waiting),
      }),
    });
    closers.push(() => worker.close());
    const reconciler = startReconciler({
      store: ops,
      runQueue,
      intervalMs: config.reconcileIntervalMs,
      olderThanMs: config.reconcileAfterMs,
      logger,
    });
    closers.push(() => reconciler.stop());
    // Runs parked for a model's capacity wait in its line: woken when room frees.
    if (config.capacityLine) {
      const capacityLine = startCapacityLine({
        limiter: limiter.capacity,
        limits: capacity.limits,
        runQueue,
        parentOf: async (runId) => (await reads.getRun(runId))?.parentRunId,
        logger,
      });
      closers.push(() => capacityLine.stop());
    }
    const retention = startRetention({ store: ops, retainDays: config.retainDays, logger });
    closers.push(() => retention.stop());
    const searchChunks = startSearchChunks({ store: ops, logger });
    closers.push(() => searchChunks.stop());
    const webhooks = await startWebhookDelivery({
      connection: queueConnectionOf(config),
      store: new PostgresWebhookStore(db),
      settings: config.webhooks,
      publicUrl: config.publicUrl,
      logger,
      lock: { lockDurationMs: config.lockMs, stalledIntervalMs: config.stalledIntervalMs },
      observeAttempt: (attempt) => metrics.observeWebhookAttempt(attempt),
    });
    closers.push(() => webhooks.close());
    logger.info(
      {
        backend: runQueue.backend,
        queue: runQueue.name,
        concurrency: config.workerConcurrency,
        executionThreads: config.executionThreads,
        model: config.model,
        entities: registry.list().map((ref) => `${ref.kind}:${ref.name}`),
      },
      'worker started',
    );
  } catch (error) {
    await closeAll();
    throw error;
  }
  return { id: config.workerId, config, close: closeAll };
}

/** Execution threads (the default), or this thread when `executionThreads` is 0. */
async function createExecutor(deps: {
  config: CairnEnvConfig;
  store: StoreWrites;
  registry: Registry;
  registryModule: string | undefined;
  context: unknown;
  model: Model | undefined;
  logger: WorkerLogger;
  onFatal: (error: Error) => void;
  metrics: CairnMetrics;
  capacity: CapacitySettings;
  prices: ModelPrices;
}): Promise<RunExecutor> {
  const { config, logger } = deps;
  const settings: ExecutorSettings = {
    databaseUrl: config.databaseUrl,
    workerId: config.workerId,
    leaseCheckMs: leaseCheckMsFor(config.lockMs),
    maxAttempts: config.maxAttempts,
    onAttemptsExhausted: config.onAttemptsExhausted,
    versionGraceMs: config.versionGraceMs,
    tenantBudgets: config.tenantBudgets,
    backend: config.queueBackend,
    redisUrl: config.redisUrl,
    redisCluster: config.redisCluster,
    otlpEndpoint: config.otlpEndpoint,
    captureMessageContent: config.captureMessageContent,
  };
  if (config.executionThreads === 0 || deps.registryModule === undefined) {
    return createConfiguredExecutor(settings, {
      store: deps.store,
      registry: deps.registry,
      context: deps.context,
      model: deps.model,
      capacity: deps.capacity,
      prices: deps.prices,
      logger,
      observe: (observation) => deps.metrics.observe(observation),
    });
  }
  return createThreadExecutor({
    threads: config.executionThreads,
    logger,
    observe: (observation) => deps.metrics.observe(observation),
    onThreadDeath: deps.onFatal,
    config: {
      ...settings,
      registryModule: deps.registryModule,
      model: config.model,
      openaiApiKey: config.openaiApiKey,
      openaiBaseUrl: config.openaiBaseUrl,
      modelStream: config.modelStream,
      dbPoolMax: Math.max(4, Math.ceil(config.workerConcurrency / config.executionThreads) + 2),
      namedStatements: config.namedStatements,
      queueName: config.queueName,
      queuePrefix: config.queuePrefix,
      capacity: {
        modelLimits: config.modelLimits,
        capacityWaitMs: config.capacityWaitMs,
        capacityLine: config.capacityLine,
        tenantWeights: config.tenantWeights,
      },
      modelPrices: config.modelPrices,
    },
  });
}
