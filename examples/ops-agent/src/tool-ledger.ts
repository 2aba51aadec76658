import pg from 'pg';

let pool: pg.Pool | undefined;
let ready: Promise<unknown> | undefined;

/**
 * Inserts one `ops_tool_ledger` row per execution of a side-effecting tool
 * into the Postgres database named by `OPS_LEDGER_URL`, outside the worker's
 * store, so tests and the demo count executions across processes (a killed
 * worker's included). No-op when the variable is unset.
 */
export async function recordOpsExecution(
  tool: string,
  idempotencyKey: string,
  args: unknown,
): Promise<void> {
  const url = process.env.OPS_LEDGER_URL;
  if (!url) return;
  pool ??= new pg.Pool({ connectionString: url, max: 2 });
  ready ??= pool.query(
    `create table if not exists ops_tool_ledger (
       tool text not null, idempotency_key text not null, args jsonb not null,
       worker_id text not null, pid int not null, at timestamptz not null default now())`,
  );
  await ready;
  await pool.query(
    'insert into ops_tool_ledger (tool, idempotency_key, args, worker_id, pid) values ($1, $2, $3, $4, $5)',
    [tool, idempotencyKey, JSON.stringify(args), process.env.CAIRN_WORKER_ID ?? '', process.pid],
  );
}
