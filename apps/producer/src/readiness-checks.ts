import type { HealthCheck } from './routes/health-routes.js';
import type { ProducerService } from './producer-service.js';

/** `/readyz` probes for a connected service: the store's Postgres, and Redis when the queue lives there. */
export function readinessChecks(service: ProducerService): Record<string, HealthCheck> {
  const postgres: HealthCheck = () => service.store.ops.ping();
  const queue: HealthCheck = () => service.runQueue.queue.getJobCounts('waiting');
  return service.runQueue.backend === 'redis' ? { postgres, redis: queue } : { postgres, queue };
}
