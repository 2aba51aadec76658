import type { CreatedRun, CreateRunRequest } from '@cairn/engine';
import type { EntityCatalog } from '@cairn/engine/store';
import { ScheduleQueue, type QueueConnectionOptions } from '@cairn/queue';
import { createDb, ScheduleStore, ServedEntityCatalog } from '@cairn/store';
import type { Logger } from 'pino';
import { startScheduleFiringWorker } from './schedule-firing-worker.js';
import { ScheduleService } from './schedule-service.js';

/** What {@link openSchedules} takes. */
export interface OpenSchedulesOptions {
  databaseUrl: string;
  /** The run queue's backend and name: the schedules' queue is `<queue>-schedules` beside it. */
  queue: QueueConnectionOptions;
  /** Where entity names are checked. @defaultValue the entities live workers serve ({@link ServedEntityCatalog}) */
  catalog?: EntityCatalog;
  /** Creates and enqueues a firing's run (`ProducerService.enqueueRun`). */
  startRun(request: CreateRunRequest): Promise<CreatedRun>;
  /** Take firing jobs in this process, with these lock settings. @defaultValue no firing worker */
  firing?: { lockDurationMs: number; stalledIntervalMs: number; logger?: Logger };
}

/** The producer's schedules: the API's service, its queue, and (when asked) the worker that takes firings. */
export interface OpenedSchedules {
  service: ScheduleService;
  queue: ScheduleQueue;
  close(): Promise<void>;
}

/**
 * Opens the schedules beside a producer: a small pool of its own on the store, the schedules'
 * queue, the service, and the firing worker; schedulers lost with a Redis's data are restored.
 */
export async function openSchedules(options: OpenSchedulesOptions): Promise<OpenedSchedules> {
  const db = createDb(options.databaseUrl, { max: 4 });
  let queue: ScheduleQueue;
  try {
    queue = await ScheduleQueue.open({
      ...options.queue,
      databaseUrl: options.queue.databaseUrl ?? options.databaseUrl,
    });
  } catch (error) {
    await db.destroy();
    throw error;
  }
  const service = new ScheduleService({
    store: new ScheduleStore(db),
    queue,
    catalog: options.catalog ?? new ServedEntityCatalog(db),
    startRun: options.startRun,
  });
  const worker = options.firing && startScheduleFiringWorker({ queue, service, ...options.firing });
  if (options.firing) {
    const restored = await service.restoreSchedulers();
    if (restored > 0) options.firing.logger?.info({ restored }, 'schedulers restored');
  }
  return {
    service,
    queue,
    close: async () => {
      await worker?.close();
      await queue.close();
      await db.destroy();
    },
  };
}
