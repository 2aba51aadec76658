import { appendFileSync } from 'node:fs';

/**
 * Appends one line per tool execution to the file named by
 * `CAIRN_TOOL_LEDGER`, so tests and demos can count executions across
 * processes (a crashed worker's executions included).
 */
export function recordExecution(tool: string, idempotencyKey: string): void {
  const file = process.env.CAIRN_TOOL_LEDGER;
  if (file) appendFileSync(file, `${tool}\t${idempotencyKey}\n`);
}
