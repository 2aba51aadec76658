import type { CairnClient } from '@cairn/queue';
import type { HealthCheck } from './routes/health-routes.js';

/** `/readyz` probes for a connected client: the store's Postgres, and Redis when the queue lives there. */
export function readinessChecks(client: CairnClient): Record<string, HealthCheck> {
  const postgres: HealthCheck = () =>
    client.store.db.selectFrom('runs').select('run_id').limit(1).execute();
  const queue: HealthCheck = () => client.runQueue.queue.getJobCounts('waiting');
  return client.runQueue.backend === 'redis' ? { postgres, redis: queue } : { postgres, queue };
}
