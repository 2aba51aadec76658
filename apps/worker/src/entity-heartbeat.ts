import type { Registry } from '@cairn/engine';
import { startPeriodicPass, type PeriodicPass, type WorkerLogger } from '@cairn/runtime';
import { ENTITY_HEARTBEAT_MS, type ServedEntityCatalog } from '@cairn/store';

/** A running heartbeat; `stop()` ends it. */
export type EntityHeartbeat = PeriodicPass;

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
  return startPeriodicPass(() => options.catalog.record(options.workerId, entities), {
    everyMs: ENTITY_HEARTBEAT_MS,
    onError: (error) =>
      options.logger.warn({ err: error }, 'could not refresh the served entities'),
  });
}
