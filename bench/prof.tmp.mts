import pg from 'pg';
import { BenchServices } from './lib/services.js';
import { startWorker } from './lib/fleet.js';
import { openClient, enqueueRuns, waitForTerminal } from './lib/producer.js';
const s = new BenchServices();
try {
  const d = await s.database('prof');
  const redisUrl = await s.redisUrl();
  const target = { databaseUrl: d.url, backend: 'redis' as const, redisUrl, queueName: 'prof' };
  const client = await openClient(target);
  const pool = new pg.Pool({ connectionString: d.url, max: 2 });
  const w = startWorker({ ...target, workerId: 'prof-1', nodeFlags: ['--cpu-prof', '--cpu-prof-dir=/tmp/benchprof'] });
  await w.ready;
  const cpu0 = process.cpuUsage();
  const t = performance.now();
  const runs = await enqueueRuns(client, 200);
  const enq = performance.now() - t;
  await waitForTerminal(pool, runs.map(r => r.runId), 300000);
  const el = (performance.now() - t) / 1000;
  const c = process.cpuUsage(cpu0);
  console.log('runs/s', 200 / el, 'enqueue ms', enq, 'producer cpu s', (c.user + c.system) / 1e6, 'wall', el);
  await w.stop();
  await client.close(); await pool.end();
} finally { await s.stop(); }
