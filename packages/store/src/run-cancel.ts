import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import { CANCELLABLE_STATUSES, RunNotFoundError } from '@cairn/engine';
import type { RunRecord, RunStatus } from '@cairn/engine';
import { RunAlreadyTerminalError } from './errors.js';
import { closeRunningToolCalls } from './close-tool-calls.js';
import { cancelPendingActions } from './pending-actions.js';
import { toRunRecord } from './run-row.js';
import type { Database } from './schema.js';
import { withRunTree } from './run-tree.js';
import { RUN_TRANSITIONS } from '@cairn/engine/store';

/** Options of {@link forceCancel}. */
export interface ForceCancelOptions {
  /** Cancel only while the run's epoch is still this one (the execution believed dead still holds it). */
  onlyIfEpoch?: number;
  /**
   * Cancel only from these statuses.
   * @defaultValue CANCELLABLE_STATUSES
   */
  statuses?: readonly RunStatus[];
}

const CANCEL = {
  status: RUN_TRANSITIONS.cancel.to,
  epoch: sql<number>`epoch + 1`,
  cancel_requested_at: sql<Date>`coalesce(cancel_requested_at, now())`,
  updated_at: sql<Date>`now()`,
  // A run cancelled while parked for model capacity waits for nothing any more.
  waiting: null,
  suspend_request: null,
} as const;

/** Sets `cancel_requested_at` for the worker holding the run to see; throws `RunNotFoundError` or `RunAlreadyTerminalError`. */
export async function requestCancel(db: Kysely<Database>, runId: string): Promise<RunRecord> {
  const row = await db
    .updateTable('runs')
    .set({ cancel_requested_at: sql`coalesce(cancel_requested_at, now())`, updated_at: sql`now()` })
    .where('run_id', '=', runId)
    .where('status', 'in', CANCELLABLE_STATUSES)
    .returningAll()
    .executeTakeFirst();
  if (row) return toRunRecord(row);
  const current = await db
    .selectFrom('runs')
    .select('status')
    .where('run_id', '=', runId)
    .executeTakeFirst();
  if (!current) throw new RunNotFoundError(runId);
  throw new RunAlreadyTerminalError(runId, current.status);
}

/**
 * Cancels a run nobody will finish (queued, or its worker dead): status
 * CANCELLED and epoch + 1, so a zombie's later writes fail with
 * `LeaseLostError`; closes the open attempt and cascades to live member runs.
 * Returns undefined when the run's status or epoch no longer match.
 */
export async function forceCancel(
  db: Kysely<Database>,
  runId: string,
  options: ForceCancelOptions = {},
): Promise<RunRecord | undefined> {
  const statuses = options.statuses ?? CANCELLABLE_STATUSES;
  return db.transaction().execute(async (trx) => {
    let update = trx.updateTable('runs').set(CANCEL).where('run_id', '=', runId);
    if (statuses.length > 0) update = update.where('status', 'in', statuses);
    if (options.onlyIfEpoch !== undefined) update = update.where('epoch', '=', options.onlyIfEpoch);
    const row = statuses.length > 0 ? await update.returningAll().executeTakeFirst() : undefined;
    if (!row) {
      const exists = await trx
        .selectFrom('runs')
        .select('run_id')
        .where('run_id', '=', runId)
        .executeTakeFirst();
      if (!exists) throw new RunNotFoundError(runId);
      return undefined;
    }
    const descendants = await withRunTree(trx, runId)
      .updateTable('runs')
      .set(CANCEL)
      .where('run_id', 'in', (eb) => eb.selectFrom('tree').select('tree.run_id'))
      .where('status', 'in', CANCELLABLE_STATUSES)
      .returning('run_id')
      .execute();
    await cancelPendingActions(trx, [runId, ...descendants.map((d) => d.run_id)]);
    await closeRunningToolCalls(trx, [runId, ...descendants.map((d) => d.run_id)], 'CANCELLED');
    await trx
      .updateTable('run_attempts')
      .set({ ended_at: sql`now()`, outcome: 'cancelled' })
      .where('run_id', 'in', [runId, ...descendants.map((d) => d.run_id)])
      .where('ended_at', 'is', null)
      .execute();
    return toRunRecord(row);
  });
}
