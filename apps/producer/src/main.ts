/** `npm run producer`: the HTTP API configured by the environment. */
import { parseEnvConfig, type CairnEnvConfig } from '@cairn/runtime';
import { pino } from 'pino';
import { startProducer, type CairnProducer } from './start-producer.js';

let config: CairnEnvConfig;
try {
  config = parseEnvConfig();
} catch (error) {
  console.error(`producer: bad configuration: ${(error as Error).message}`);
  process.exit(2);
}
const logger = pino({ name: 'cairn-producer', level: config.logLevel });

let producer: CairnProducer;
try {
  producer = await startProducer({ ...config, logger });
} catch (error) {
  logger.fatal({ err: error }, `producer could not start: ${(error as Error).message}`);
  process.exit(1);
}

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, 'shutting down');
  try {
    await producer.close();
  } catch (error) {
    logger.error({ err: error }, 'closing the producer failed');
    process.exitCode = 1;
  }
  process.exit();
}
process.once('SIGTERM', () => void shutdown('SIGTERM'));
process.once('SIGINT', () => void shutdown('SIGINT'));
