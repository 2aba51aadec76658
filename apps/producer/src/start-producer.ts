import type { Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import type { Registry } from '@cairn/engine';
import {
  createLiveSubscriber,
  queueConnectionOf,
  resolveEnvConfig,
  startMetricsServer,
  startTracing,
  type CairnEnvConfig,
  type MetricsServer,
} from '@cairn/runtime';
import type { Hono } from 'hono';
import { pino, type Logger } from 'pino';
import { createDb, PostgresWebhookStore } from '@cairn/store';
import { createApp } from './app.js';
import { openSchedules, type OpenedSchedules } from './open-schedules.js';
import { ProducerMetrics } from './producer-metrics.js';
import { ProducerService } from './producer-service.js';
import { readinessChecks } from './readiness-checks.js';

/** What {@link startProducer} takes: any field of the environment's configuration. */
export interface StartProducerOptions extends Partial<Omit<CairnEnvConfig, 'registryModule'>> {
  /**
   * Validates entity names with this registry instead of the entities workers
   * recorded in the store. Rarely wanted: it makes the producer load tool code.
   * @defaultValue the store's served entities
   */
  registry?: Registry;
  /** @defaultValue pino on stdout at `logLevel` */
  logger?: Logger;
  /** Read for every field not given. @defaultValue process.env */
  env?: NodeJS.ProcessEnv;
}

/** A running producer: the HTTP API on `port`. */
export interface CairnProducer {
  /** The port it listens on (the one asked for, or the one the system chose for `port: 0`). */
  readonly port: number;
  /** Where Prometheus `/metrics` is served without a key (`metricsPort`, `CAIRN_METRICS_PORT`); undefined: only on `port`, to admin keys. */
  readonly metricsPort?: number;
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  readonly app: Hono;
  readonly client: ProducerService;
  /** Stops listening, then closes the client's connections. */
  close(): Promise<void>;
}

/**
 * Starts the producer's HTTP API (runs, sessions, events, Bull Board,
 * health, metrics) in this process. Entity names are checked against the
 * entities workers recorded in the store, so the producer needs neither the
 * agents' code nor a model key. Options default to the environment.
 *
 * @example
 * ```ts
 * const producer = await startProducer({ databaseUrl, redisUrl, port: 3000 });
 * process.once('SIGTERM', () => void producer.close());
 * ```
 */
export async function startProducer(options: StartProducerOptions = {}): Promise<CairnProducer> {
  const { registry, logger: givenLogger, env, ...overrides } = options;
  const config = resolveEnvConfig(overrides, env);
  const logger = givenLogger ?? pino({ name: 'cairn-producer', level: config.logLevel });
  const client = await ProducerService.connect({
    databaseUrl: config.databaseUrl,
    namedStatements: config.namedStatements,
    queue: { ...queueConnectionOf(config), tenantWeights: config.tenantWeights },
    registry,
    migrate: config.migrate,
    tenantBudgets: config.tenantBudgets,
  });
  let schedules: OpenedSchedules;
  try {
    schedules = await openSchedules({
      databaseUrl: config.databaseUrl,
      queue: queueConnectionOf(config),
      catalog: registry,
      startRun: (request) => client.enqueueRun(request),
      firing: {
        lockDurationMs: config.lockMs,
        stalledIntervalMs: config.stalledIntervalMs,
        logger,
      },
    });
  } catch (error) {
    await client.close();
    throw error;
  }
  const tracing = config.otlpEndpoint
    ? await startTracing({ endpoint: config.otlpEndpoint, serviceName: 'cairn-producer' })
    : undefined;
  // The webhook endpoints' own small pool: the API's endpoint reads and writes are few.
  const webhookDb = createDb(config.databaseUrl, { max: 2 });
  const live = createLiveSubscriber({
    backend: config.queueBackend,
    redisUrl: config.redisUrl,
    redisCluster: config.redisCluster,
    databaseUrl: config.databaseUrl,
  });
  const metrics = new ProducerMetrics({
    queues: [client.runQueue.queue],
    countPausedRuns: () => client.countRunsByStatus('PAUSED'),
  });
  const app = createApp({
    client,
    live,
    metrics,
    webhooks: {
      webhooks: new PostgresWebhookStore(webhookDb),
      allowPrivate: config.webhooks.allowPrivate,
    },
    queues: [client.runQueue.queue, schedules.queue.queue],
    schedules: schedules.service,
    healthChecks: readinessChecks(client),
    apiKeys: config.apiKeys,
    readApiKeys: config.readApiKeys,
    sessionSecret: config.sessionSecret,
    limits: {
      maxBodyBytes: config.maxBodyBytes,
      maxInputChars: config.maxInputChars,
      maxRunsPerSession: config.maxRunsPerSession,
    },
    events: { maxStreamsPerKey: config.maxStreamsPerKey },
    mcp: { publicUrl: config.publicUrl, waitMs: config.mcpWaitMs },
    logger,
  });
  let server: ServerType | undefined;
  let port: number;
  let metricsServer: MetricsServer | undefined;
  try {
    ({ server, port } = await listen(app, config.port));
    // Scrapers often hold no key: this port serves /metrics alone, for the network to guard (as a worker's does).
    if (config.metricsPort !== undefined)
      metricsServer = await startMetricsServer(metrics, config.metricsPort);
  } catch (error) {
    if (server) await new Promise((resolve) => server!.close(resolve));
    await webhookDb.destroy();
    await live.close();
    await schedules.close();
    await client.close();
    throw error;
  }
  if (metricsServer) logger.info({ port: metricsServer.port }, 'metrics listening');
  logger.info(
    {
      port,
      queue: config.queueName,
      backend: config.queueBackend,
      auth: config.apiKeys.length + config.readApiKeys.length > 0,
    },
    'producer listening',
  );
  let closing: Promise<void> | undefined;
  const listening = server;
  return {
    port,
    metricsPort: metricsServer?.port,
    url: `http://127.0.0.1:${port}`,
    app,
    client,
    close: () =>
      (closing ??= (async () => {
        const closed = new Promise<void>((resolve) => listening.close(() => resolve()));
        // Open event streams would hold `close` forever.
        (listening as Partial<HttpServer>).closeAllConnections?.();
        await closed;
        await metricsServer?.close();
        await live.close();
        await schedules.close();
        await client.close();
        await tracing?.shutdown();
        await webhookDb.destroy();
      })()),
  };
}

function listen(app: Hono, port: number): Promise<{ server: ServerType; port: number }> {
  return new Promise((resolve, reject) => {
    const server = serve({ fetch: app.fetch, port }, (info: AddressInfo) =>
      resolve({ server, port: info.port }),
    );
    server.once('error', reject);
  });
}
