/**
 * Child process of the in-process crash flow: executes one run of the
 * research team against DATABASE_URL, as a worker would, until it ends or is killed.
 */
import { Engine } from '@cairn/engine';
import { createRegistry } from '@cairn/research-team';
import { createDb, openStore } from '@cairn/store';

const [runId] = process.argv.slice(2);
const databaseUrl = process.env.DATABASE_URL;
if (!runId || !databaseUrl) {
  console.error('usage: DATABASE_URL=... execute-run.ts <run-id>');
  process.exit(2);
}
const db = createDb(databaseUrl);
const engine = new Engine({
  store: openStore(db).writes,
  registry: createRegistry(),
  workerId: `child:${process.pid}`,
});
await engine.execute(runId, { reason: 'run' });
await db.destroy();
