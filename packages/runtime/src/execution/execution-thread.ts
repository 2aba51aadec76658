/**
 * Entry of an execution thread: runs the engine for the jobs the main thread
 * sends, so that a tool blocking this thread's event loop cannot stop the
 * main thread from renewing BullMQ's job locks.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { mergeModelPrices } from '@cairn/engine';
import { serializeError } from '@cairn/engine/lifecycle';
import { createDb, openStore } from '@cairn/store';
import { capacitySettingsOf } from '../capacity/capacity-settings.js';
import { openModelCapacity } from '../capacity/open-model-capacity.js';
import { loadRegistryModule, modelFromSpec } from '../load-registry.js';
import type { WorkerLogger } from '../worker-logger.js';
import { createConfiguredExecutor } from './configured-executor.js';
import type { RunExecutor } from './run-executor.js';
import type {
  ExecutionThreadConfig,
  FromThread,
  ThreadLogLevel,
  ToThread,
} from './thread-protocol.js';

const port = parentPort!;
const config = workerData as ExecutionThreadConfig;
const post = (message: FromThread) => port.postMessage(message);

const log =
  (level: ThreadLogLevel) =>
  (fields: Record<string, unknown>, message: string): void => {
    const err = fields.err;
    const plain =
      err instanceof Error ? { ...fields, err: { name: err.name, message: err.message } } : fields;
    post({ type: 'log', level, fields: plain, message });
  };
const logger: WorkerLogger = {
  debug: log('debug'),
  info: log('info'),
  warn: log('warn'),
  error: log('error'),
};

let executor: RunExecutor;
try {
  const model = modelFromSpec(config, logger);
  const { registry, context, modelLimits, modelPrices } = await loadRegistryModule(
    config.registryModule,
    model,
  );
  const db = createDb(config.databaseUrl, {
    max: config.dbPoolMax,
    namedStatements: config.namedStatements,
  });
  const { writes, ops } = openStore(db);
  const limiter = openModelCapacity({
    backend: config.backend,
    redisUrl: config.redisUrl,
    redisCluster: config.redisCluster,
    queueName: config.queueName,
    queuePrefix: config.queuePrefix,
    store: ops,
  });
  executor = await createConfiguredExecutor(config, {
    store: writes,
    registry,
    model,
    context,
    prices: mergeModelPrices(modelPrices, new Map(Object.entries(config.modelPrices))),
    capacity: capacitySettingsOf(limiter.capacity, config.capacity, modelLimits, (error) =>
      logger.debug({ err: error }, 'model capacity: a release or renewal failed'),
    ),
    logger,
    observe: (observation) => post({ type: 'observation', observation }),
    onClose: async () => {
      await limiter.close();
      await db.destroy();
    },
  });
  post({ type: 'ready' });
} catch (error) {
  post({ type: 'init-failed', message: (error as Error).message });
  process.exit(1);
}

port.on('message', (message: ToThread) => {
  switch (message.type) {
    case 'execute':
      executor.execute(message.request).outcome.then(
        (outcome) => post({ type: 'outcome', id: message.id, outcome }),
        (error: unknown) => post({ type: 'failed', id: message.id, error: serializeError(error) }),
      );
      return;
    case 'handover-all':
      executor.handoverAll();
      return;
    case 'ping':
      post({ type: 'pong' });
      return;
    case 'close':
      void executor.close().finally(() => {
        post({ type: 'closed' });
        port.close();
      });
      return;
  }
});
