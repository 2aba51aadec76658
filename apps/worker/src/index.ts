/**
 * `@cairn/worker`'s public surface, chosen on purpose: start a Cairn worker
 * from your own process (`startWorker`). Each export here is tagged
 * `@public`; knip reports any other export of the entry, so the package's own
 * modules stay its own.
 */

/** @public */
export { startWorker, type StartWorkerOptions, type CairnWorker } from './start-worker.js';
