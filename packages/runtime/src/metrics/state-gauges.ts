import type { CapacitySnapshot, ModelCapacity } from '@cairn/engine';
import { Gauge, type Registry } from 'prom-client';

/** A queue whose job counts `cairn_queue_jobs` reports: a BullMQ `Queue`. */
export interface CountedQueue {
  readonly name: string;
  getJobCounts(): Promise<Record<string, number>>;
}

/** What the gauges read at each scrape. */
export interface MetricSources {
  /** Queues whose jobs are counted by state. */
  queues?: readonly CountedQueue[];
  /** How many runs are PAUSED waiting for decisions. */
  countPausedRuns?: () => Promise<number>;
  /** The fleet's model limiter (a worker's main-thread one): its waiters and concurrency caps per model. */
  modelCapacity?: Pick<ModelCapacity, 'snapshot'>;
}

interface QueueCounts {
  queue: string;
  /** Undefined when the queue did not answer. */
  counts: Record<string, number> | undefined;
}

function countQueues(queues: readonly CountedQueue[]): Promise<QueueCounts[]> {
  return Promise.all(
    queues.map(async (queue) => ({
      queue: queue.name,
      counts: await queue.getJobCounts().catch(() => undefined),
    })),
  );
}

/**
 * Registers the gauges of what the store, the queues and the model limiter
 * hold now, read at each scrape: `cairn_runs_paused`, `cairn_queue_up`,
 * `cairn_queue_jobs{queue,state}`, `cairn_model_permits_waiting{model}`,
 * `cairn_model_concurrency_limit{model}`.
 */
export function registerStateGauges(registry: Registry, sources: MetricSources): void {
  const { countPausedRuns, queues = [], modelCapacity } = sources;
  const registers = [registry];
  new Gauge({
    name: 'cairn_runs_paused',
    help: 'Runs PAUSED waiting for human decisions.',
    registers,
    async collect() {
      if (countPausedRuns) this.set(await countPausedRuns());
    },
  });
  // Both gauges read one count per queue per scrape (prom-client collects them concurrently).
  let counting: Promise<QueueCounts[]> | undefined;
  const countJobs = () => (counting ??= countQueues(queues).finally(() => (counting = undefined)));
  new Gauge({
    name: 'cairn_queue_up',
    help: 'Whether the queue answered the job-count query.',
    labelNames: ['queue'],
    registers,
    async collect() {
      for (const { queue, counts } of await countJobs()) this.set({ queue }, counts ? 1 : 0);
    },
  });
  new Gauge({
    name: 'cairn_queue_jobs',
    help: "Jobs in the queue by state; `waiting` includes BullMQ's `prioritized` (every run's jobs carry its priority).",
    labelNames: ['queue', 'state'],
    registers,
    async collect() {
      this.reset();
      for (const { queue, counts } of await countJobs()) {
        for (const [state, count] of Object.entries(waitingWithPrioritized(counts ?? {})))
          this.set({ queue, state }, count);
      }
    },
  });
  if (modelCapacity) registerCapacityGauges(registry, modelCapacity);
}

/** The limiter's gauges, both from one snapshot per scrape; a limiter that does not answer leaves them empty. */
function registerCapacityGauges(
  registry: Registry,
  capacity: Pick<ModelCapacity, 'snapshot'>,
): void {
  const registers = [registry];
  let reading: Promise<CapacitySnapshot[]> | undefined;
  const snapshot = () =>
    (reading ??= capacity
      .snapshot()
      .catch(() => [])
      .finally(() => (reading = undefined)));
  new Gauge({
    name: 'cairn_model_permits_waiting',
    help: "Runs waiting in line for a model's permit, fleet-wide (a parked run has left the line until its job is due).",
    labelNames: ['model'],
    registers,
    async collect() {
      this.reset();
      for (const { model, waiting } of await snapshot()) this.set({ model }, waiting);
    },
  });
  new Gauge({
    name: 'cairn_model_concurrency_limit',
    help: "A model's concurrency cap in force now, fleet-wide (halved by a 429, grown back on success); absent: no cap.",
    labelNames: ['model'],
    registers,
    async collect() {
      this.reset();
      for (const { model, concurrencyLimit } of await snapshot()) {
        if (concurrencyLimit !== undefined) this.set({ model }, concurrencyLimit);
      }
    },
  });
}

/**
 * BullMQ's counts with `prioritized` folded into `waiting`: a job with a
 * priority waits like any other (BullMQ keeps it in a state of its own), and
 * since every run's jobs carry its priority, `waiting` alone would read 0.
 */
function waitingWithPrioritized(counts: Record<string, number>): Record<string, number> {
  const { prioritized = 0, ...rest } = counts;
  return { ...rest, waiting: (rest.waiting ?? 0) + prioritized };
}
