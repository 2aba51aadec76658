import { LeaseLostError } from '@cairn/engine';
import { EXECUTING_STATUS } from '@cairn/engine/store';
import type { Kysely } from 'kysely';
import type { Database } from './schema.js';

/**
 * Inside a member run's create or claim: share-locks the parent's row (a
 * concurrent claim of the parent waits for this transaction) and throws
 * `LeaseLostError` unless `parentEpoch` still holds the parent.
 */
export async function assertParentHeld(
  db: Kysely<Database>,
  parentRunId: string,
  parentEpoch: number,
): Promise<void> {
  const parent = await db
    .selectFrom('runs')
    .select(['epoch', 'status'])
    .where('run_id', '=', parentRunId)
    .forShare()
    .executeTakeFirst();
  if (parent?.epoch !== parentEpoch || parent.status !== EXECUTING_STATUS)
    throw new LeaseLostError(parentRunId, parentEpoch);
}
