import { serve } from '@hono/node-server';
import { CairnClient, loadRegistry, modelFromSpec, parseEnvConfig, type CairnEnvConfig } from '@cairn/queue';
import { pino } from 'pino';
import { createApp } from './app.js';
import { readinessChecks } from './readiness-checks.js';

let config: CairnEnvConfig;
try {
  config = parseEnvConfig();
} catch (error) {
  console.error(`producer: bad configuration: ${(error as Error).message}`);
  process.exit(2);
}
const logger = pino({ name: 'cairn-producer', level: config.logLevel });

let client: CairnClient;
try {
  const model = modelFromSpec(config);
  client = await CairnClient.connect({
    databaseUrl: config.databaseUrl,
    queue: {
      backend: config.queueBackend,
      redisUrl: config.redisUrl,
      queueName: config.queueName,
      prefix: config.queuePrefix,
    },
    registry: await loadRegistry(config.registryModule, model),
    model,
    migrate: config.migrate,
  });
} catch (error) {
  logger.fatal({ err: error }, `producer could not start: ${(error as Error).message}`);
  process.exit(1);
}

const app = createApp({
  client,
  queues: [client.runQueue.queue],
  healthChecks: readinessChecks(client),
  apiKeys: config.apiKeys,
  readApiKeys: config.readApiKeys,
  limits: {
    maxBodyBytes: config.maxBodyBytes,
    maxInputChars: config.maxInputChars,
    maxRunsPerSession: config.maxRunsPerSession,
  },
  logger,
});

const server = serve({ fetch: app.fetch, port: config.port }, (info) => {
  logger.info(
    {
      port: info.port,
      queue: config.queueName,
      backend: config.queueBackend,
      auth: config.apiKeys.length + config.readApiKeys.length > 0,
    },
    'producer listening',
  );
});

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, 'shutting down');
  server.close();
  try {
    await client.close();
  } catch (error) {
    logger.error({ err: error }, 'closing the client failed');
    process.exitCode = 1;
  }
  process.exit();
}
process.once('SIGTERM', () => void shutdown('SIGTERM'));
process.once('SIGINT', () => void shutdown('SIGINT'));

