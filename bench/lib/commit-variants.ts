import pg from 'pg';
import { Kysely, PostgresDialect } from 'kysely';
import type { CheckpointStore } from '@cairn/engine/store';
import { createDb, migrate, openStore, type Database } from '@cairn/store';
import {
  createClaimedRun,
  typicalDelta,
  typicalEvents,
  type ClaimedRun,
} from './checkpoint-fixture.js';
import { createBareTable, rawStatement, rawTransaction } from './raw-commits.js';
import { tracedPool, type TracedPool } from './traced-pool.js';

/** Commits per run before the variants move to a fresh run (keeps each run's history bounded). */
const COMMITS_PER_RUN = 250;

/** One way of committing the typical batch: `prepare()` (untimed) then `commit()`, one durable commit. */
export interface CommitVariant {
  name: string;
  prepare(): Promise<void>;
  commit(): Promise<void>;
}

/** The store, a raw pool and a traced store on one benchmark database. */
export interface CommitBench {
  store: CheckpointStore;
  pool: pg.Pool;
  traced: TracedPool;
  tracedStore: CheckpointStore;
  close(): Promise<void>;
}

/** Migrates the database and opens what the commit variants use. */
export async function openCommitBench(url: string): Promise<CommitBench> {
  const db = createDb(url);
  await migrate(db);
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  await createBareTable(pool);
  const traced = tracedPool(url);
  const tracedDb = new Kysely<Database>({ dialect: new PostgresDialect({ pool: traced.pool }) });
  return {
    store: openStore(db).writes,
    pool,
    traced,
    tracedStore: openStore(tracedDb).writes,
    close: async () => {
      await db.destroy();
      await tracedDb.destroy();
      await pool.end();
    },
  };
}

/** Commits typical batches into a claimed run, moving to a fresh run every {@link COMMITS_PER_RUN}. */
function rotatingRun(
  store: CheckpointStore,
  write: (run: ClaimedRun, batch: number) => Promise<void>,
) {
  let run: ClaimedRun | undefined;
  let batch = 0;
  return {
    /** Claims a fresh run when due (call untimed, before `commit`). */
    prepare: async () => {
      if (!run || batch >= COMMITS_PER_RUN) {
        run = await createClaimedRun(store);
        batch = 0;
      }
    },
    commit: () => write(run!, ++batch),
  };
}

/** Cairn's `commitCheckpoint` on `store`, rotating runs; `prepare()` must precede each `commit()`. */
export function cairnVariant(
  store: CheckpointStore,
  name = 'cairn commitCheckpoint',
): CommitVariant {
  const rotating = rotatingRun(store, async (run, batch) => {
    await store.commitCheckpoint(run.runId, run.epoch, typicalDelta(batch));
  });
  return { name, ...rotating };
}

/** Cairn's `commitCheckpoint` with the batch's events, as the worker writes it. */
export function cairnWithEventsVariant(store: CheckpointStore): CommitVariant {
  const rotating = rotatingRun(store, async (run, batch) => {
    await store.commitCheckpoint(run.runId, run.epoch, {
      ...typicalDelta(batch),
      events: typicalEvents(run, batch),
    });
  });
  return { name: "cairn commitCheckpoint with the batch's 9 events", ...rotating };
}

/** The typical batch's message rows as JSON texts: what the raw variants insert. */
export function batchRows(batch: number): string[] {
  return typicalDelta(batch).messages.map((m) => JSON.stringify(m));
}

/** BEGIN; INSERT the batch's rows into a bare table; COMMIT. */
export function rawVariant(pool: pg.Pool): CommitVariant {
  let batch = 0;
  return {
    name: 'raw pg transaction',
    prepare: async () => undefined,
    commit: () => rawTransaction(pool, batchRows(++batch)),
  };
}

/** The batch's rows in one autocommitted INSERT. */
export function rawStatementVariant(pool: pg.Pool): CommitVariant {
  let batch = 0;
  return {
    name: 'raw single INSERT',
    prepare: async () => undefined,
    commit: () => rawStatement(pool, batchRows(++batch)),
  };
}
