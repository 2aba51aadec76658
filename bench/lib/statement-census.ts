import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { BudgetOption } from '@cairn/engine';
import { RunQueue, startRunWorker } from '@cairn/queue';
import { openStore, type Database } from '@cairn/store';
import { createRegistry } from './bench-registry.js';
import { enqueueRuns, openClient, waitForTerminal, type QueueTarget } from './producer.js';
import { tracedPool } from './traced-pool.js';

/** Statements a worker sends per run, by kind, and their total. */
export interface StatementCensus {
  perRun: number;
  byKind: Record<string, number>;
}

/**
 * Runs `runs` benchmark runs (each with `budget` when given) through the
 * queue's own `startRunWorker` in this process, on a traced pool, and counts
 * the statements the worker side sends per run (the producer's are not counted).
 */
export async function statementCensus(
  target: QueueTarget,
  runs: number,
  budget?: BudgetOption,
): Promise<StatementCensus> {
  const traced = tracedPool(target.databaseUrl, 14);
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: traced.pool }) });
  const client = await openClient(target);
  const runQueue = await RunQueue.open({
    backend: target.backend,
    redisUrl: target.redisUrl,
    databaseUrl: target.databaseUrl,
    queueName: target.queueName,
  });
  const worker = startRunWorker({
    runQueue,
    store: openStore(db).writes,
    registry: createRegistry(),
    workerId: 'census',
  });
  const watcher = new pg.Pool({ connectionString: target.databaseUrl, max: 1 });
  try {
    await worker.worker.waitUntilReady();
    traced.take();
    const created = await enqueueRuns(client, runs, undefined, budget);
    await waitForTerminal(
      watcher,
      created.map((r) => r.runId),
      120_000,
    );
    const byKind: Record<string, number> = {};
    const traces = traced.take();
    for (const t of traces) byKind[t.statement] = (byKind[t.statement] ?? 0) + 1 / runs;
    return { perRun: traces.length / runs, byKind };
  } finally {
    await worker.close();
    await runQueue.close();
    await client.close();
    await watcher.end();
    await db.destroy();
  }
}
