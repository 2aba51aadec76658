import type { CairnEnvConfig } from './env-config.js';
import type { QueueBackendKind } from './queue-backend-kind.js';

/** Where a process's queues are: the connection every queue of `@cairn/queue` opens with. */
export interface QueueConnection {
  backend: QueueBackendKind;
  redisUrl?: string;
  redisCluster: boolean;
  databaseUrl: string;
  queueName: string;
  prefix?: string;
}

/** The queue connection the configuration names (the run queue, schedules and webhook deliveries share it). */
export function queueConnectionOf(config: CairnEnvConfig): QueueConnection {
  return {
    backend: config.queueBackend,
    redisUrl: config.redisUrl,
    redisCluster: config.redisCluster,
    databaseUrl: config.databaseUrl,
    queueName: config.queueName,
    prefix: config.queuePrefix,
  };
}
