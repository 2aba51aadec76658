import pg from 'pg';
import {
  cairnVariant,
  rawVariant,
  type CommitBench,
  type CommitVariant,
} from './commit-variants.js';
import { median } from './stats.js';
import { msSince } from './timing.js';
import { walBytesOf } from './wal.js';

/** Median round-trip time per statement of one commit, and what the statements leave unexplained. */
export interface StatementBreakdown {
  /** Statements per commit (round trips). */
  roundTrips: number;
  /** Median ms per statement, in order. */
  statements: { statement: string; medianMs: number }[];
  /** Median wall time of the whole commit. */
  totalMs: number;
  /** Median of (commit wall time - sum of its statements): pool checkout, query building, JS. */
  clientMs: number;
}

async function traceCommits(
  bench: CommitBench,
  variant: CommitVariant,
  rounds: number,
): Promise<StatementBreakdown> {
  const perStatement = new Map<string, number[]>();
  const totals: number[] = [];
  const client: number[] = [];
  let roundTrips = 0;
  for (let round = 0; round < rounds; round++) {
    await variant.prepare();
    bench.traced.take();
    const start = process.hrtime.bigint();
    await variant.commit();
    const total = msSince(start);
    await new Promise((resolve) => setImmediate(resolve));
    const traces = bench.traced.take();
    roundTrips = traces.length;
    traces.forEach((t, i) => {
      const key = `${i + 1}. ${t.statement}`;
      perStatement.set(key, [...(perStatement.get(key) ?? []), t.ms]);
    });
    totals.push(total);
    client.push(total - traces.reduce((s, t) => s + t.ms, 0));
  }
  return {
    roundTrips,
    statements: [...perStatement].map(([statement, ms]) => ({ statement, medianMs: median(ms) })),
    totalMs: median(totals),
    clientMs: median(client),
  };
}

/** Per-statement timing of Cairn's commit and of the raw transaction, on traced connections. */
export async function statementBreakdowns(
  bench: CommitBench,
  rounds: number,
): Promise<{ cairn: StatementBreakdown; raw: StatementBreakdown }> {
  const cairn = cairnVariant(bench.tracedStore);
  const raw = rawVariant(bench.traced.pool);
  // interleave in blocks so both see the same machine state
  const blocks = 4;
  const cairnParts: StatementBreakdown[] = [];
  const rawParts: StatementBreakdown[] = [];
  for (let b = 0; b < blocks; b++) {
    cairnParts.push(await traceCommits(bench, cairn, Math.ceil(rounds / blocks)));
    rawParts.push(await traceCommits(bench, raw, Math.ceil(rounds / blocks)));
  }
  return { cairn: mergeParts(cairnParts), raw: mergeParts(rawParts) };
}

function mergeParts(parts: StatementBreakdown[]): StatementBreakdown {
  const first = parts[0]!;
  return {
    roundTrips: first.roundTrips,
    statements: first.statements.map((s, i) => ({
      statement: s.statement,
      medianMs: median(parts.map((p) => p.statements[i]?.medianMs ?? Number.NaN)),
    })),
    totalMs: median(parts.map((p) => p.totalMs)),
    clientMs: median(parts.map((p) => p.clientMs)),
  };
}

/** WAL bytes of one commit of each variant (round-robin), read on a separate connection to `url`. */
export async function walPerCommit(
  url: string,
  variants: readonly CommitVariant[],
  rounds: number,
): Promise<number[][]> {
  const reader = new pg.Client({ connectionString: url });
  await reader.connect();
  try {
    const bytes = variants.map((): number[] => []);
    for (let round = 0; round < rounds; round++) {
      for (const [i, variant] of variants.entries()) {
        await variant.prepare();
        bytes[i]!.push((await walBytesOf(reader, () => variant.commit())).bytes);
      }
    }
    return bytes;
  } finally {
    await reader.end();
  }
}
