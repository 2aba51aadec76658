import { BenchServices } from './lib/services.js';
import { runChild } from './lib/child.js';
const s = new BenchServices();
try {
  const d = await s.database('pw');
  const r = await runChild<any>(process.env.W ?? 'bench/children/cairn-workload.ts', { args: [JSON.stringify({ runs: 50, concurrency: 10, rounds: 2, serialRuns: 5, historySizes: [10, 1000], growthReps: 3 })], env: { DATABASE_URL: d.url } });
  console.log(JSON.stringify(r, null, 0).slice(0, 3000));
} finally { await s.stop(); }
