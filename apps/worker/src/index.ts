export { startWorkerProcess, type WorkerProcess } from './worker-process.js';
