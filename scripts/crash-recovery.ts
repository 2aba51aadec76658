/**
 * The seed's crash-recovery example, in process (no queue): SIGKILL a worker
 * subprocess mid-run, then continue the run from its last checkpoint.
 * Usage: `node --import tsx --conditions=source scripts/crash-recovery.ts [team|member]`.
 */
import { startPostgres } from '@cairn/services';
import { runSeedCrashRecovery, type KillPoint } from './lib/seed-crash-recovery.js';

const killPoint = (process.argv[2] ?? 'member') as KillPoint;
if (killPoint !== 'team' && killPoint !== 'member') {
  console.error(`kill point must be "team" or "member", got ${JSON.stringify(killPoint)}`);
  process.exit(2);
}
const postgres = await startPostgres();
try {
  await runSeedCrashRecovery({
    databaseUrl: postgres.url,
    killPoint,
    log: (line) => console.log(line),
  });
} finally {
  await postgres.stop();
}
