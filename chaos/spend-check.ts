import type pg from 'pg';
import { SCENARIO_RUNS } from './chaos-db.js';

/** What the provider billed against what a scenario's runs recorded, in responses and tokens. */
export interface SpendCheck {
  /** The provider's ledger: requests it answered (200, with usage) and their usage totals. */
  billed: { responses: number; tokens: number };
  /** Committed histories: assistant messages of every run (members included), and the runs' usage totals. */
  recorded: { responses: number; tokens: number };
  /** Billed responses no committed history holds (billed - recorded): lost with a killed worker. */
  uncountedResponses: number;
  /** Recorded tokens / billed tokens (1 when nothing was lost). */
  tokensRecordedPerBilled: number;
  /** Runs (members included) a kill caught with an open attempt: each can lose its response in flight. */
  runsInterruptedByKills: number;
}

/**
 * Holds a scenario's runs to the provider's bill: every response the
 * provider answered is in a committed history unless a kill took it (a turn
 * lost to a crash is asked again, and its first answer's usage is known to
 * no one), and none is counted twice.
 */
export async function spendCheck(
  db: pg.Pool,
  scenario: string,
  billed: SpendCheck['billed'],
  kills: readonly { workerId?: string; at: number }[],
): Promise<SpendCheck> {
  // runs.usage is positional; its third element is totalTokens (packages/store/src/usage-column.ts).
  const { rows } = await db.query<{ responses: number; tokens: number }>(
    `select (select count(*)::int from run_messages
              where run_id in (${SCENARIO_RUNS}) and message->>'role' = 'assistant') as responses,
            (select coalesce(sum((usage->>2)::bigint), 0)::float8 from runs
              where run_id in (${SCENARIO_RUNS})) as tokens`,
    [scenario],
  );
  const recorded = { responses: rows[0]?.responses ?? 0, tokens: rows[0]?.tokens ?? 0 };
  let runsInterruptedByKills = 0;
  for (const kill of kills) {
    if (!kill.workerId) continue;
    const { rows: held } = await db.query<{ n: number }>(
      `select count(distinct run_id)::int as n from run_attempts
        where run_id in (${SCENARIO_RUNS}) and worker_id = $2
          and started_at <= to_timestamp($3 / 1000.0)
          and (ended_at is null or ended_at >= to_timestamp($3 / 1000.0))`,
      [scenario, kill.workerId, kill.at],
    );
    runsInterruptedByKills += held[0]?.n ?? 0;
  }
  return {
    billed,
    recorded,
    uncountedResponses: billed.responses - recorded.responses,
    tokensRecordedPerBilled: billed.tokens > 0 ? recorded.tokens / billed.tokens : 1,
    runsInterruptedByKills,
  };
}

/** The check's lines of a scenario's text report. */
export function formatSpend(s: SpendCheck): string[] {
  return [
    `  spend: the provider billed ${s.billed.responses} responses (${s.billed.tokens} tokens), committed histories hold ${s.recorded.responses} (${s.recorded.tokens} tokens); tokens recorded / billed ${s.tokensRecordedPerBilled.toFixed(4)}`,
    `  responses uncounted (goal <= ${s.runsInterruptedByKills}, one per run a kill interrupted): ${s.uncountedResponses}; responses recorded but not billed (goal 0): ${Math.max(0, -s.uncountedResponses)}`,
  ];
}
