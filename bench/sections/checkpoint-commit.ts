import pg from 'pg';
import { alternate } from '../lib/alternate.js';
import { deltaBytes, typicalDelta } from '../lib/checkpoint-fixture.js';
import { statementBreakdowns, walPerCommit, type StatementBreakdown } from '../lib/commit-breakdown.js';
import {
  cairnVariant,
  cteVariant,
  openCommitBench,
  rawStatementVariant,
  rawVariant,
  type CommitVariant,
} from '../lib/commit-variants.js';
import { fmt, medianFigure, ratioFigure } from '../lib/figure.js';
import type { Section } from '../lib/section.js';
import { median } from '../lib/stats.js';
import { walRecordBreakdown, type WalRecordGroup } from '../lib/wal-records.js';

const ID = 'checkpoint';

function describe(name: string, b: StatementBreakdown): string {
  const parts = b.statements.map((s) => `${s.statement} ${fmt(s.medianMs)}`).join(', ');
  return `${name}: ${b.roundTrips} round trips, median total ${fmt(b.totalMs)} ms = [${parts}] + client-side ${fmt(b.clientMs)} ms (pool checkout, query building, JSON)`;
}

function describeRecords(groups: readonly WalRecordGroup[]): string {
  return groups.map((g) => `${g.record}${g.relation ? ` ${g.relation}` : ''} ${fmt(g.records)}x ${fmt(g.bytes)} B`).join('; ');
}

async function walRecords(url: string, bench: Awaited<ReturnType<typeof openCommitBench>>) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const measure = async (variant: CommitVariant) => {
      await variant.prepare();
      return walRecordBreakdown(client, () => variant.commit(), 20);
    };
    const cairn = await measure(cairnVariant(bench.store));
    const raw = await measure(rawVariant(bench.pool));
    return cairn && raw ? { cairn, raw } : undefined;
  } finally {
    await client.end();
  }
}

/** Section 1: Cairn's checkpoint commit of a typical batch against a raw pg transaction of the same bytes. */
export const checkpointCommitSection: Section = {
  id: ID,
  title: 'Checkpoint commit vs the limit',
  cairn: true,
  async run({ quick, services, log }) {
    const database = await services.database(ID);
    const bench = await openCommitBench(database.url);
    try {
      const rounds = quick ? 200 : 2000;
      const warmup = quick ? 30 : 100;
      const variants = [
        cairnVariant(bench.store),
        rawVariant(bench.pool),
        cteVariant(bench.store, bench.pool),
        rawStatementVariant(bench.pool),
      ];
      log(`alternating ${variants.length} commit variants, ${rounds} rounds`);
      const [cairn, raw, cte, single] = await alternate(variants, rounds, warmup);
      log('tracing statements and WAL bytes');
      const breakdown = await statementBreakdowns(bench, quick ? 60 : 400);
      const wal = await walPerCommit(bench, database.url, quick ? 30 : 200);
      const records = await walRecords(database.url, bench);
      const bytes = deltaBytes(typicalDelta(1));
      const walMedian = (name: string) => median(wal[name] ?? []);
      const note = `same batch in every variant: ${bytes.messages} B of message JSON (4 rows); Cairn also writes 3 tool_calls rows (${bytes.toolCalls} B of args + results)`;
      return {
        figures: [
          medianFigure(ID, 'cairn commitCheckpoint', cairn!, 'ms', { note }),
          medianFigure(ID, 'raw pg transaction (BEGIN/INSERT/COMMIT, bare table)', raw!, 'ms'),
          ratioFigure(ID, 'cairn / raw', cairn!, raw!, { goal: { op: '<=', bound: 1.2 } }),
          medianFigure(ID, 'proposed one-statement commit (CTE, not in store yet)', cte!, 'ms'),
          ratioFigure(ID, 'proposed CTE commit / raw', cte!, raw!, { goal: { op: '<=', bound: 1.2 } }),
          medianFigure(ID, 'raw single autocommit INSERT', single!, 'ms'),
          medianFigure(ID, 'WAL per cairn commit', wal['cairn commitCheckpoint'] ?? [], 'B'),
          medianFigure(ID, 'WAL per raw commit', wal['raw pg transaction'] ?? [], 'B'),
          medianFigure(ID, 'WAL per proposed CTE commit', wal['proposed one-statement commit'] ?? [], 'B'),
        ],
        notes: [
          describe('cairn', breakdown.cairn),
          describe('raw', breakdown.raw),
          `WAL bytes per commit (median): cairn ${fmt(walMedian('cairn commitCheckpoint'))}, raw ${fmt(walMedian('raw pg transaction'))}, proposed CTE ${fmt(walMedian('proposed one-statement commit'))}`,
          ...(records ? [`WAL records per cairn commit (pg_walinspect, mean of 20): ${describeRecords(records.cairn)}`, `WAL records per raw commit: ${describeRecords(records.raw)}`] : ['pg_walinspect not available: no WAL record breakdown']),
        ],
        details: { breakdown, bytes, walRecords: records },
      };
    } finally {
      await bench.close();
    }
  },
};
