import type { QueueBackendKind } from '@cairn/runtime';
import type { Processor, Queue, Worker, WorkerOptions } from 'bullmq';

/** A BullMQ queue on either backend (typed as the Redis one: the public API is the same). */
export type AnyQueue = Queue;
/** A BullMQ worker on either backend. */
export type AnyWorker = Worker;

/**
 * What one backend module opens: the leaf both backends and the `RunQueue`
 * facade import, so neither backend imports the facade.
 */
export interface BackendHandle {
  kind: QueueBackendKind;
  queue: AnyQueue;
  createWorker(processor: Processor, options: Omit<WorkerOptions, 'connection'>): AnyWorker;
  close(): Promise<void>;
}
