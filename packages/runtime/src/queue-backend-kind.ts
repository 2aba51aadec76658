/** Where the run queue can live: Redis, or BullMQ's PostgreSQL backend. */
export const QUEUE_BACKEND_KINDS = ['redis', 'postgres'] as const;

/** Where the run queue lives (`CAIRN_QUEUE_BACKEND`); the live channel follows it. */
export type QueueBackendKind = (typeof QUEUE_BACKEND_KINDS)[number];

/** The run queue's name when `CAIRN_QUEUE_NAME` is unset. */
export const DEFAULT_QUEUE_NAME = 'cairn-runs';
