import type { Registry } from '@cairn/engine';
import type { WorkerLogger } from '@cairn/runtime';
import { ENTITY_HEARTBEAT_MS, type ServedEntityCatalog } from '@cairn/store';

/** How often a worker refreshes the last-seen time of the entities it serves (the store's constant, which judges liveness by it). */
export { ENTITY_HEARTBEAT_MS };

/** A running heartbeat; `stop()` ends it. */
export interface EntityHeartbeat {
  stop(): void;
}

/**
 * Records the registry's entities in the store (awaited, so a producer can
 * validate their names once the worker has started), then refreshes them
 * every {@link ENTITY_HEARTBEAT_MS}.
 */
export async function startEntityHeartbeat(options: {
  catalog: ServedEntityCatalog;
  registry: Registry;
  workerId: string;
  logger: WorkerLogger;
}): Promise<EntityHeartbeat> {
  const entities = options.registry.describeAll();
  await options.catalog.record(options.workerId, entities);
  const timer = setInterval(() => {
    options.catalog.record(options.workerId, entities).catch((error: unknown) => {
      options.logger.warn({ err: error }, 'could not refresh the served entities');
    });
  }, ENTITY_HEARTBEAT_MS);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
