import type { ToolContext } from '@cairn/engine';
import type pg from 'pg';
import { harnessPool } from './chaos-db.js';

/** How long a tool keeps trying to write its ledger row while Postgres is away. */
const LEDGER_RETRY_MS = 120_000;

let pool: pg.Pool | undefined;

function ledgerPool(): pg.Pool | undefined {
  const url = process.env.CHAOS_LEDGER_URL;
  if (!url) return undefined;
  pool ??= harnessPool(url);
  return pool;
}

/**
 * Inserts one `chaos_tool_ledger` row for a finished tool execution (tool,
 * idempotency key, run, epoch, worker), retrying while Postgres restarts;
 * gives up only when the execution is aborted. No-op without `CHAOS_LEDGER_URL`.
 */
export async function recordToolExecution(toolName: string, ctx: ToolContext): Promise<void> {
  const db = ledgerPool();
  if (!db) return;
  const deadline = Date.now() + LEDGER_RETRY_MS;
  for (;;) {
    try {
      await db.query(
        `insert into chaos_tool_ledger (tool, idempotency_key, run_id, epoch, worker_id, worker_pid)
         values ($1, $2, $3, $4, $5, $6)`,
        [
          toolName,
          ctx.idempotencyKey,
          ctx.runId,
          ctx.epoch,
          process.env.CAIRN_WORKER_ID ?? '',
          process.pid,
        ],
      );
      return;
    } catch (error) {
      ctx.signal.throwIfAborted();
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}
