/** `@cairn/worker`: start a Cairn worker from your own process. */
export { startWorker, type StartWorkerOptions, type CairnWorker } from './start-worker.js';
export { ENTITY_HEARTBEAT_MS } from './entity-heartbeat.js';
