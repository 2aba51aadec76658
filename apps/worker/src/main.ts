/** `npm run worker`: a worker configured by the environment, serving `CAIRN_REGISTRY`. */
import { parseEnvConfig, type CairnEnvConfig } from '@cairn/runtime';
import { pino } from 'pino';
import { startWorker } from './start-worker.js';

let config: CairnEnvConfig;
try {
  config = parseEnvConfig();
} catch (error) {
  console.error(`worker: bad configuration: ${(error as Error).message}`);
  process.exit(2);
}
const logger = pino({ level: config.logLevel, base: { workerId: config.workerId } });

try {
  const worker = await startWorker({ ...config, registry: config.registryModule, logger });
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: handing running jobs back');
    worker.close().then(
      () => {
        logger.info('worker stopped');
        process.exit(0);
      },
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
} catch (error) {
  logger.fatal({ err: error }, `worker could not start: ${(error as Error).message}`);
  process.exit(1);
}
