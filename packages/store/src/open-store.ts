import type { Kysely } from 'kysely';
import { PostgresCheckpointStore } from './postgres-checkpoint-store.js';
import type { Database } from './schema.js';
import type { StoreParts } from './store-parts.js';

/**
 * The Postgres store on `db`, as its parts: the executions' writes, the API's
 * reads, the human-in-the-loop primitives and the operations. One
 * `PostgresCheckpointStore` implements them all; a consumer takes one part.
 *
 * @example
 * const { writes, reads } = openStore(createDb(process.env.DATABASE_URL!));
 * const engine = new Engine({ store: writes, registry });
 * const view = await reads.getRunView(runId);
 */
export function openStore(db: Kysely<Database>): StoreParts {
  const store = new PostgresCheckpointStore(db);
  return { writes: store, reads: store, hitl: store, ops: store };
}
