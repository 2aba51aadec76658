import type pg from 'pg';

/** A run's progress as the recovery benchmark watches it. */
export interface RunState {
  /** `last_checkpoint_at_message_index`. */
  idx: number;
  epoch: number;
  status: string;
  /** When the run's latest event batch was stored (every checkpoint commit stores one), epoch ms. */
  committedMs: number;
  /** The latest attempt's worker and start (epoch ms). */
  workerId: string | null;
  startedMs: number | null;
}

const STATE_SQL = `
SELECT r.last_checkpoint_at_message_index AS idx, r.epoch, r.status,
       (SELECT extract(epoch FROM c.created_at) * 1000 FROM run_commits c
         WHERE c.run_id = r.run_id ORDER BY c.last_seq DESC, c.end_idx DESC LIMIT 1) AS committed_ms,
       a.worker_id, extract(epoch FROM a.started_at) * 1000 AS started_ms
  FROM runs r
  LEFT JOIN LATERAL (SELECT worker_id, started_at FROM run_attempts
                      WHERE run_id = r.run_id ORDER BY epoch DESC LIMIT 1) a ON true
 WHERE r.run_id = $1`;

/** Reads the run's state in one query. */
export async function readRunState(
  db: pg.Pool | pg.Client,
  runId: string,
): Promise<RunState | undefined> {
  const { rows } = await db.query<Record<string, string | number | null>>(STATE_SQL, [runId]);
  const row = rows[0];
  if (!row) return undefined;
  return {
    idx: Number(row.idx),
    epoch: Number(row.epoch),
    status: String(row.status),
    committedMs: Number(row.committed_ms),
    workerId: row.worker_id === null ? null : String(row.worker_id),
    startedMs: row.started_ms === null ? null : Number(row.started_ms),
  };
}
