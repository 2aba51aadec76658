import type pg from 'pg';
import type { CheckpointStore } from '@cairn/engine/store';
import { createClaimedRun, typicalDelta } from './checkpoint-fixture.js';
import type { CommitVariant } from './commit-variants.js';
import { batchMessages, historyMessages } from './workload.js';

/** Batch numbers of timed commits start here, above any batch of a seeded history. */
const TIMED_BATCH_BASE = 1_000_000;

/**
 * Cairn's commit on a run holding exactly `size` messages: after each timed
 * commit, `prepare()` removes what it appended (untimed: its `run_commits` row and calls) so every commit sees
 * the same history length.
 */
export async function cairnAtHistory(
  store: CheckpointStore,
  pool: pg.Pool,
  size: number,
): Promise<CommitVariant> {
  const run = await createClaimedRun(store, historyMessages(size));
  let batch = TIMED_BATCH_BASE;
  let dirty = false;
  return {
    name: `cairn @${size}`,
    prepare: async () => {
      if (!dirty) return;
      await pool.query('DELETE FROM run_commits WHERE run_id = $1 AND end_idx > $2', [
        run.runId,
        size,
      ]);
      await pool.query('DELETE FROM tool_call_rows WHERE run_id = $1', [run.runId]);
      await pool.query('UPDATE runs SET last_checkpoint_at_message_index = $2 WHERE run_id = $1', [
        run.runId,
        size,
      ]);
      dirty = false;
    },
    commit: async () => {
      await store.commitCheckpoint(run.runId, run.epoch, typicalDelta(++batch));
      dirty = true;
    },
  };
}

/** Creates `session_blobs`: one jsonb history per session, the way a session-blob store keeps it. */
export async function createBlobTable(pool: pg.Pool): Promise<void> {
  await pool.query(
    'CREATE TABLE IF NOT EXISTS session_blobs (session_id text PRIMARY KEY, history jsonb NOT NULL)',
  );
}

/** The session-blob baseline: every commit serializes and rewrites the whole history (size + the batch) as one jsonb value. */
export async function blobAtHistory(pool: pg.Pool, size: number): Promise<CommitVariant> {
  const sessionId = `blob-${size}-${Math.random().toString(36).slice(2)}`;
  const history = historyMessages(size);
  await pool.query('INSERT INTO session_blobs (session_id, history) VALUES ($1, $2::jsonb)', [
    sessionId,
    JSON.stringify(history),
  ]);
  let batch = TIMED_BATCH_BASE;
  return {
    name: `blob @${size}`,
    prepare: async () => undefined,
    commit: async () => {
      const body = JSON.stringify([...history, ...batchMessages(++batch)]);
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        await client.query('UPDATE session_blobs SET history = $2::jsonb WHERE session_id = $1', [
          sessionId,
          body,
        ]);
        await client.query('COMMIT');
      } finally {
        client.release();
      }
    },
  };
}
