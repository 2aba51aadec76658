import { pino } from 'pino';
import { parseEnvConfig, type CairnEnvConfig } from '@cairn/queue';
import { startWorkerProcess } from './worker-process.js';

let config: CairnEnvConfig;
try {
  config = parseEnvConfig();
} catch (error) {
  console.error(`worker: bad configuration: ${(error as Error).message}`);
  process.exit(2);
}

const logger = pino({ level: config.logLevel, base: { workerId: config.workerId } });

try {
  const worker = await startWorkerProcess(config, logger, (error) => {
    // Its runs are recovered by other workers through stalled-job detection; a supervisor restarts this one.
    logger.fatal({ err: error }, 'an execution thread died: exiting');
    process.exit(1);
  });
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
