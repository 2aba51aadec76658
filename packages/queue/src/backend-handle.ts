import type { QueueBackendKind } from '@cairn/runtime';
import type { Processor, Queue, Worker, WorkerOptions } from 'bullmq';
import type { ClockBook } from './clock-book.js';

/** A BullMQ queue on either backend (typed as the Redis one: the public API is the same). */
export type AnyQueue = Queue;
/** A BullMQ worker on either backend. */
export type AnyWorker = Worker;

/** What a backend tells the worker it created, besides BullMQ's own events. */
export interface WorkerHooks {
  /** Hold a liveness connection and watch the other workers' (`worker-liveness.ts`). @defaultValue false */
  deathSignal?: boolean;
  /** The locks of a dead worker's jobs were released (its death seen before its locks expired). */
  onDeadWorker?(jobIds: readonly string[], deadWorkerId: string): void;
}

/**
 * What one backend module opens: the leaf both backends and the `RunQueue`
 * facade import, so neither backend imports the facade.
 */
export interface BackendHandle {
  kind: QueueBackendKind;
  queue: AnyQueue;
  createWorker(
    processor: Processor,
    options: Omit<WorkerOptions, 'connection'>,
    hooks?: WorkerHooks,
  ): AnyWorker;
  /** Opens the tenants' virtual clocks of the queue (`fair-line.ts`), beside the queue on its backend. */
  openClockBook(): Promise<ClockBook>;
  close(): Promise<void>;
}
