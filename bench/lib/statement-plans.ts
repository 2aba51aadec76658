import { Kysely, PostgresDialect, type CompiledQuery } from 'kysely';
import pg from 'pg';
import type { Database } from '@cairn/store';

/** One statement of a read, run again under EXPLAIN ANALYZE. */
export interface StatementPlan {
  /** The statement's first words, to tell it apart. */
  head: string;
  /** Its execution time as EXPLAIN ANALYZE measures it (planning excluded). */
  ms: number;
  /** How it reads each table: `Index Only Scan runs_top_level_unfinished_idx`, `Seq Scan tenant_day_spend`, ... */
  scans: string[];
}

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

function scansOf(node: PlanNode, into: string[]): void {
  if (node['Node Type'].endsWith('Scan') && node['Relation Name'])
    into.push(`${node['Node Type']} ${node['Index Name'] ?? node['Relation Name']}`);
  for (const child of node.Plans ?? []) scansOf(child, into);
}

/**
 * Runs `read` on a store of its own (given its Kysely), then each statement
 * it ran again under `EXPLAIN (ANALYZE)`: what each statement took and which
 * scans it used. For reads only (the statements run twice).
 */
export async function statementPlans(
  url: string,
  read: (db: Kysely<Database>) => Promise<unknown>,
): Promise<StatementPlan[]> {
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  const captured: CompiledQuery[] = [];
  const db = new Kysely<Database>({
    dialect: new PostgresDialect({ pool }),
    log: (event) => {
      if (event.level === 'query') captured.push(event.query);
    },
  });
  try {
    await read(db);
    const plans: StatementPlan[] = [];
    for (const query of captured) {
      const { rows } = await pool.query<{
        'QUERY PLAN': [{ Plan: PlanNode; 'Execution Time': number }];
      }>(`explain (analyze, format json) ${query.sql}`, [...query.parameters]);
      const top = rows[0]!['QUERY PLAN'][0];
      const scans: string[] = [];
      scansOf(top.Plan, scans);
      plans.push({
        head: query.sql.replace(/\s+/g, ' ').trim().slice(0, 60),
        ms: top['Execution Time'],
        scans: [...new Set(scans)],
      });
    }
    return plans;
  } finally {
    await db.destroy();
  }
}
