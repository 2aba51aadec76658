/**
 * Child process: the throughput floor's worker. A BullMQ worker (same
 * backend, queue wiring, concurrency and lock settings as Cairn's worker)
 * whose jobs do nothing but FLOOR_COMMITS autocommitted INSERTs of
 * FLOOR_BYTES bytes each. Configured by the worker's environment variables.
 */
import pg from 'pg';
import { RunQueue } from '@cairn/queue';
import { parseEnvConfig } from '@cairn/runtime';
import { prose } from '../lib/workload.js';

const config = parseEnvConfig();
const commits = Number(process.env.FLOOR_COMMITS ?? 6);
const payload = JSON.stringify({ body: prose(1, Number(process.env.FLOOR_BYTES ?? 2000)) });
const pool = new pg.Pool({
  connectionString: config.databaseUrl,
  max: config.workerConcurrency + 4,
});
const runQueue = await RunQueue.open({
  backend: config.queueBackend,
  redisUrl: config.redisUrl,
  databaseUrl: config.databaseUrl,
  queueName: config.queueName,
});
const worker = runQueue.createWorker(
  async (job) => {
    for (let i = 0; i < commits; i++) {
      await pool.query('INSERT INTO floor_rows (job_id, body) VALUES ($1, $2::jsonb)', [
        job.id,
        payload,
      ]);
    }
  },
  {
    name: config.workerId,
    concurrency: config.workerConcurrency,
    lockDuration: config.lockMs,
    stalledInterval: config.stalledIntervalMs,
  },
);
worker.on('error', () => undefined);
await worker.waitUntilReady();
console.log('worker ready');
process.once('SIGTERM', () => {
  void (async () => {
    await worker.close();
    await runQueue.close();
    await pool.end();
    process.exit(0);
  })();
});
