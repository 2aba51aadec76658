import pg from 'pg';
import { alternate } from '../lib/alternate.js';
import { deltaBytes, typicalDelta } from '../lib/checkpoint-fixture.js';
import {
  statementBreakdowns,
  walPerCommit,
  type StatementBreakdown,
} from '../lib/commit-breakdown.js';
import {
  cairnVariant,
  cairnWithEventsVariant,
  openCommitBench,
  rawStatementVariant,
  rawVariant,
  type CommitVariant,
} from '../lib/commit-variants.js';
import { fmt, medianFigure, ratioFigure } from '../lib/figure.js';
import type { Section } from '../lib/section.js';
import { describeRecords, walRecordBreakdown, type WalRecordGroup } from '../lib/wal-records.js';

const ID = 'checkpoint';

function describe(name: string, b: StatementBreakdown): string {
  const parts = b.statements.map((s) => `${s.statement} ${fmt(s.medianMs)}`).join(', ');
  return `${name}: ${b.roundTrips} round trips, median total ${fmt(b.totalMs)} ms = [${parts}] + client-side ${fmt(b.clientMs)} ms (pool checkout, query building, JSON)`;
}

/** WAL records of each variant, read on a connection to the variant's own database (to name its relations). */
async function walRecords(variants: readonly { variant: CommitVariant; url: string }[]) {
  const out: { name: string; groups: WalRecordGroup[] }[] = [];
  for (const { variant, url } of variants) {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await variant.prepare();
      const groups = await walRecordBreakdown(client, () => variant.commit(), 20);
      if (!groups) return undefined;
      out.push({ name: variant.name, groups });
    } finally {
      await client.end();
    }
  }
  return out;
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
      const cairn = cairnVariant(bench.store);
      const raw = rawVariant(bench.pool);
      const withEvents = cairnWithEventsVariant(bench.store);
      const variants = [cairn, raw, withEvents, rawStatementVariant(bench.pool)];
      log(`alternating ${variants.length} commit variants, ${rounds} rounds`);
      const [cairnMs, rawMs, eventsMs, singleMs] = await alternate(variants, rounds, warmup);
      log('tracing statements and WAL bytes');
      const breakdown = await statementBreakdowns(bench, quick ? 60 : 400);
      const walVariants = [cairn, raw, withEvents];
      const wal = await walPerCommit(database.url, walVariants, quick ? 30 : 200);
      const records = await walRecords(
        walVariants.map((variant) => ({ variant, url: database.url })),
      );
      const bytes = deltaBytes(typicalDelta(1));
      const note = `same batch in every variant: ${bytes.messages} B of message JSON (4 rows); Cairn also writes 3 tool_calls rows (${bytes.toolCalls} B of args + results)`;
      const goal = { op: '<=', bound: 1.2 } as const;
      return {
        figures: [
          medianFigure(ID, 'cairn commitCheckpoint', cairnMs!, 'ms', { note }),
          medianFigure(ID, 'raw pg transaction (BEGIN/INSERT/COMMIT, bare table)', rawMs!, 'ms'),
          ratioFigure(ID, 'cairn / raw', cairnMs!, rawMs!, { goal }),
          medianFigure(ID, "cairn commit with the batch's 9 events", eventsMs!, 'ms'),
          ratioFigure(ID, 'cairn commit with events / raw', eventsMs!, rawMs!),
          medianFigure(ID, 'raw single autocommit INSERT', singleMs!, 'ms'),
          ...walVariants.map((v, i) => medianFigure(ID, `WAL per commit: ${v.name}`, wal[i]!, 'B')),
        ],
        notes: [
          describe('cairn', breakdown.cairn),
          describe('raw', breakdown.raw),
          ...(records
            ? records.map(
                (r) =>
                  `WAL records per commit, ${r.name} (pg_walinspect, mean of 20): ${describeRecords(r.groups)}`,
              )
            : ['pg_walinspect not available: no WAL record breakdown']),
          'the events variant is the commit as a worker sends it: the same batch and the 9 events it covers (model turn, 3 calls started and completed, the commit), stored in the same statement',
        ],
        details: { breakdown, bytes, walRecords: records },
      };
    } finally {
      await bench.close();
    }
  },
};
