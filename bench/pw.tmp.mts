import { BenchServices } from './lib/services.js';
import { runChild } from './lib/child.js';
import { median } from './lib/stats.js';
const s = new BenchServices();
try {
  for (const w of ['bench/children/cairn-workload.ts', 'bench/peers/src/dbos-workload.ts', 'bench/peers/src/langgraph-workload.ts']) {
  const d = await s.database('pw');
  const r = await runChild<any>(w, { args: [JSON.stringify({ runs: 50, concurrency: 10, rounds: 2, serialRuns: 5, historySizes: [10, 100, 1000], growthReps: 3 })], env: { DATABASE_URL: d.url } });
  const m = (xs: any[], k: string) => median(xs.map((x) => x[k]));
  console.log(r.system, 'rps', r.runsPerSecond.map((x: number) => x.toFixed(1)), 'ckpt ms', m(r.checkpoints, 'ms').toFixed(2), 'wal', m(r.checkpoints, 'walBytes'), 'n', r.checkpoints.length,
   'sec', r.secondaryWrites ? [m(r.secondaryWrites, 'ms').toFixed(2), m(r.secondaryWrites, 'walBytes'), r.secondaryWrites.length] : '-',
   'run ms', m(r.serial, 'ms').toFixed(1), 'wal/run', m(r.serial, 'walBytes'), 'tx', m(r.serial, 'writeTx'),
   'growth', r.growth.map((g: any) => `${g.size}:${m(g.samples, 'walBytes')}B/${m(g.samples, 'ms').toFixed(1)}ms`).join(' '));
  }
} finally { await s.stop(); }
