import { parseArgs } from 'node:util';
import { createDb } from '../create-db.js';
import { parseAge } from '../prune-age.js';
import { DEFAULT_RETAIN_DAYS, pruneFinishedRuns } from '../retention.js';

/** `npm run prune [-- --older-than 7d]`: deletes finished runs older than the age (default `CAIRN_RETAIN_DAYS` days). */
function fail(message: string): never {
  console.error(message);
  process.exit(1);
}

const url = process.env.DATABASE_URL;
if (!url)
  fail(
    'DATABASE_URL is not set: set it to the Postgres URL of the store (postgres://user:pass@host:5432/db)',
  );

let olderThanMs: number;
try {
  const { values } = parseArgs({ options: { 'older-than': { type: 'string' } } });
  const retainDays = process.env.CAIRN_RETAIN_DAYS?.trim()
    ? Number(process.env.CAIRN_RETAIN_DAYS)
    : DEFAULT_RETAIN_DAYS;
  if (values['older-than'] === undefined && (!Number.isInteger(retainDays) || retainDays < 0)) {
    fail(
      `CAIRN_RETAIN_DAYS: expected a whole number of days (0 keeps everything), got ${JSON.stringify(process.env.CAIRN_RETAIN_DAYS)}`,
    );
  }
  if (values['older-than'] === undefined && retainDays === 0) {
    console.log(
      'CAIRN_RETAIN_DAYS=0 keeps everything: nothing to prune (pass --older-than to prune by hand)',
    );
    process.exit(0);
  }
  olderThanMs =
    values['older-than'] === undefined ? retainDays * 86_400_000 : parseAge(values['older-than']);
} catch (error) {
  fail(error instanceof Error ? error.message : String(error));
}

const db = createDb(url, { max: 2 });
try {
  const olderThan = new Date(Date.now() - olderThanMs);
  const result = await pruneFinishedRuns(db, { olderThan });
  console.log(
    result.locked
      ? `pruned ${result.runs} finished run(s) and ${result.sessions} empty session(s) last updated before ${olderThan.toISOString()}, in ${result.batches} batch(es)`
      : 'another process is pruning now (advisory lock held): nothing done',
  );
} catch (error) {
  console.error(error);
  process.exitCode = 1;
} finally {
  await db.destroy();
}
