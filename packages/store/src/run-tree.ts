import type { Kysely } from 'kysely';
import type { Database } from './schema.js';

/**
 * The query creator of a statement over a run's tree: it gives the CTE
 * `tree(run_id)`, every member run below `runId`, recursively, and `runId`
 * itself with `includeRoot`. The one place the store walks a team's tree.
 */
export function withRunTree(
  db: Kysely<Database>,
  runId: string,
  options: { includeRoot?: boolean } = {},
) {
  return db.withRecursive('tree(run_id)', (qb) =>
    qb
      .selectFrom('runs')
      .select('run_id')
      .where(options.includeRoot ? 'run_id' : 'parent_run_id', '=', runId)
      .unionAll((u) =>
        u
          .selectFrom('runs as r')
          .innerJoin('tree', 'tree.run_id', 'r.parent_run_id')
          .select('r.run_id'),
      ),
  );
}
