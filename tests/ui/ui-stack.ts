import { join } from 'node:path';
import { freePort, spawnApp, testRedisUrl, type AppProcess } from '@cairn/services';
import type { Message } from '@cairn/engine';
import { FLEET_BACKEND, startFleet, type Fleet, type FleetOptions } from '../fleet/fleet.js';

/** Options of {@link startUiStack}. */
export interface UiStackOptions extends Omit<FleetOptions, 'backend'> {
  /** `CAIRN_API_KEYS` of the producer; none: the pages are open. */
  apiKeys?: readonly string[];
  /** `CAIRN_READ_API_KEYS` of the producer. */
  readApiKeys?: readonly string[];
}

/** A fleet (database, queue, client, workers on demand) with a real producer process in front of it. */
export interface UiStack {
  fleet: Fleet;
  producer: AppProcess;
  baseUrl: string;
  stop(): Promise<void>;
}

/** Starts a fleet on the test run's queue backend (Redis when it has one) and spawns `npm run producer` on it. */
export async function startUiStack(options: UiStackOptions = {}): Promise<UiStack> {
  const backend = FLEET_BACKEND;
  const fleet = await startFleet({ ...options, backend });
  const port = await freePort();
  const producer = spawnApp('producer', {
    name: 'producer',
    logFile: join(fleet.dir, 'producer.log'),
    env: {
      DATABASE_URL: fleet.db.url,
      CAIRN_QUEUE_BACKEND: backend,
      CAIRN_QUEUE_NAME: fleet.client.runQueue.queue.name,
      REDIS_URL: backend === 'redis' ? testRedisUrl() : undefined,
      CAIRN_MODEL: undefined,
      OPENAI_API_KEY: undefined,
      CAIRN_API_KEYS: options.apiKeys?.join(','),
      CAIRN_READ_API_KEYS: options.readApiKeys?.join(','),
      PORT: String(port),
      LOG_LEVEL: 'info',
    },
  });
  try {
    await producer.waitForLog('producer listening');
  } catch (error) {
    await fleet.stop();
    throw error;
  }
  return {
    fleet,
    producer,
    baseUrl: `http://127.0.0.1:${port}`,
    stop: async () => {
      if (producer.alive) producer.kill('SIGKILL');
      await producer.exited;
      await fleet.stop();
    },
  };
}

/** Creates a run without enqueueing it, claims it and finishes it with `messages`, as a worker would. */
export async function storeFinishedRun(
  fleet: Fleet,
  request: { entity: { kind: 'agent' | 'team'; name: string }; input: string; tenantId?: string },
  status: 'COMPLETED' | 'ERROR',
  messages: Message[],
): Promise<string> {
  const { store } = fleet;
  const { engine } = fleet.client;
  const run = await engine.createRun({ ...request, checkpoint: 'tool-batch' });
  const { epoch } = await store.claimRun(run.runId, { workerId: 'test-worker', reason: 'run' });
  await store.finishRun(run.runId, epoch, {
    status,
    content: status === 'COMPLETED' ? 'done' : null,
    error:
      status === 'ERROR'
        ? { name: 'ModelError', message: 'model unavailable', retryable: true }
        : null,
    delta: { messages, toolCalls: [], usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 } },
  });
  return run.runId;
}
