import { Kysely, PostgresDialect, type CompiledQuery } from 'kysely';
import pg from 'pg';
import type { Database } from '@cairn/store';

/** A Kysely on its own pool that keeps every query it runs, so a read's statements can be EXPLAINed afterwards. */
export interface PlanningDb {
  db: Kysely<Database>;
  /** The relations each statement `read` runs reads with a sequential scan (EXPLAIN, not run again), and the statements it ran. */
  seqScansOf(read: () => Promise<unknown>): Promise<{ seqScanned: string[]; statements: number }>;
  destroy(): Promise<void>;
}

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  Plans?: PlanNode[];
}

function seqScanned(node: PlanNode, into: Set<string>): void {
  if (node['Node Type'] === 'Seq Scan' && node['Relation Name']) into.add(node['Relation Name']);
  for (const child of node.Plans ?? []) seqScanned(child, into);
}

/** Opens a {@link PlanningDb} on `url`. */
export function planningDb(url: string): PlanningDb {
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  let captured: CompiledQuery[] = [];
  const db = new Kysely<Database>({
    dialect: new PostgresDialect({ pool }),
    log: (event) => {
      if (event.level === 'query') captured.push(event.query);
    },
  });
  return {
    db,
    async seqScansOf(read) {
      captured = [];
      await read();
      const statements = captured;
      captured = [];
      const relations = new Set<string>();
      for (const query of statements) {
        const { rows } = await pool.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
          `explain (format json) ${query.sql}`,
          [...query.parameters],
        );
        const plan = rows[0]?.['QUERY PLAN'][0]?.Plan;
        if (plan) seqScanned(plan, relations);
      }
      return { seqScanned: [...relations].sort(), statements: statements.length };
    },
    destroy: () => db.destroy(),
  };
}
