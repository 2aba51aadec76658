import { startWorker } from '@cairn/worker';

// DATABASE_URL, REDIS_URL, CAIRN_WORKER_ID, ... come from the environment.
const worker = await startWorker({
  registry: new URL('./registry.js', import.meta.url),
  databaseUrl: process.env.DATABASE_URL,
});
process.once('SIGTERM', () => void worker.close().then(() => process.exit(0)));
