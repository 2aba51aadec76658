import { setTimeout as delay } from 'node:timers/promises';
import { FINAL_STATUSES } from '@cairn/engine';
import type pg from 'pg';
import { CHAOS_GATED_TOOL, CHAOS_OPERATOR } from './chaos-registry.js';
import { retrying, TOP_LEVEL_RUNS } from './chaos-db.js';
import type { ScenarioContext } from './scenario-context.js';
import { seededRandom } from './seeded-random.js';

/** The approvals scenario's name (its runs' `chaos_scenario`). */
export const APPROVAL_SCENARIO = 'approvals';

/** What the approvals scenario found; every goal is 0 when it passed. */
export interface ApprovalScenarioReport {
  scenario: string;
  durationMs: number;
  drained: boolean;
  runs: { submitted: number; completed: number };
  /** Decision requests posted (duplicates included) and how the API answered them. */
  decisions: { posted: number; duplicatesPosted: number; answers: Record<string, number> };
  kills: number;
  /** Executions of the gated tool (ledger rows) and distinct gated calls executed. */
  gatedExecutions: number;
  gatedCallsExecuted: number;
  /** Approved calls whose worker was killed after claiming them and before their result was stored: not run again (at most once). */
  gatedCallsInterrupted: number;
  goals: { gatedCallsExecutedTwice: number; stuckPausedAfterDecided: number; notCompleted: number };
  passed: boolean;
}

/**
 * Paused runs with decisions posted while workers are SIGKILLed: `runs`
 * operator runs pause on two gated restarts each; a decider approves every
 * pending action over HTTP as it appears (a third of them posted twice at
 * once), while `kills` SIGKILLs hit the fleet. Then no gated call may have
 * executed twice and no run may stay PAUSED with every action decided.
 */
export async function runApprovalScenario(
  ctx: ScenarioContext,
  options: { runs: number; kills: number; seed: number; drainMs: number },
): Promise<ApprovalScenarioReport> {
  const startedAt = Date.now();
  const random = seededRandom(options.seed + 9);
  const answers: Record<string, number> = {};
  let posted = 0;
  let duplicatesPosted = 0;
  const submitted = (
    await Promise.all(Array.from({ length: options.runs }, (_, seq) => submit(ctx, seq)))
  ).filter(Boolean).length;
  let deciding = true;
  const decided = new Set<string>();
  const decider = (async () => {
    while (deciding) {
      const pending = await retrying(() => pendingActions(ctx.db, APPROVAL_SCENARIO)).catch(
        () => [],
      );
      await Promise.all(
        pending
          .filter((a) => !decided.has(a.action_id))
          .map(async (a) => {
            decided.add(a.action_id);
            const copies = random() < 1 / 3 ? 2 : 1;
            duplicatesPosted += copies - 1;
            const results = await Promise.all(
              Array.from({ length: copies }, () => postApproval(ctx.api, a)),
            );
            posted += copies;
            for (const status of results) answers[status] = (answers[status] ?? 0) + 1;
            if (!results.includes('200')) decided.delete(a.action_id); // the API was unreachable: try again
          }),
      );
      await delay(200);
    }
  })();
  const killEveryMs = 1_500;
  for (let k = 0; k < options.kills; k++) {
    await delay(killEveryMs);
    const serving = ctx.fleet.serving();
    const victim = serving[Math.floor(random() * serving.length)];
    if (!victim) continue;
    await ctx.fleet.kill(victim);
    const replacement = ctx.fleet.spawn(victim.slot);
    ctx.log(`  [${APPROVAL_SCENARIO}] SIGKILL ${victim.id} -> ${replacement.id}`);
  }
  const drained = await drainFinal(ctx, submitted, options.drainMs);
  deciding = false;
  await decider;
  const goals = await checkGoals(ctx);
  const { rows } = await ctx.db.query<{
    executions: number;
    calls: number;
    completed: number;
    interrupted: number;
  }>(
    `select (select count(*)::int from chaos_tool_ledger where tool = $2) as executions,
            (select count(*)::int from run_messages where run_id in (${TOP_LEVEL_RUNS})
                and message->>'role' = 'tool' and message->>'content' like '%was started after its approval%') as interrupted,
            (select count(distinct idempotency_key)::int from chaos_tool_ledger where tool = $2) as calls,
            (select count(*)::int from runs where run_id in (${TOP_LEVEL_RUNS}) and status = 'COMPLETED') as completed`,
    [APPROVAL_SCENARIO, CHAOS_GATED_TOOL],
  );
  const counts = rows[0]!;
  return {
    scenario: APPROVAL_SCENARIO,
    durationMs: Date.now() - startedAt,
    drained,
    runs: { submitted, completed: counts.completed },
    decisions: { posted, duplicatesPosted, answers },
    kills: options.kills,
    gatedExecutions: counts.executions,
    gatedCallsExecuted: counts.calls,
    gatedCallsInterrupted: counts.interrupted,
    goals,
    passed: drained && Object.values(goals).every((n) => n === 0),
  };
}

async function submit(ctx: ScenarioContext, seq: number): Promise<string | undefined> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const res = await fetch(`${ctx.api.baseUrl}/v1/agents/${CHAOS_OPERATOR}/runs`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${ctx.api.apiKey}` },
      body: JSON.stringify({
        input: `svc-${seq}`,
        metadata: { chaos_scenario: APPROVAL_SCENARIO, chaos_seq: seq },
      }),
    }).catch(() => undefined);
    if (res?.status === 202) return ((await res.json()) as { run_id: string }).run_id;
    await delay(500);
  }
  return undefined;
}

/** A pending action of a scenario's run, as a decision names it. */
export interface PendingRow {
  action_id: string;
  root_run_id: string;
  args_digest: string;
}

/** The pending actions of `scenario`'s top-level runs. */
export async function pendingActions(db: pg.Pool, scenario: string): Promise<PendingRow[]> {
  const { rows } = await db.query<PendingRow>(
    `select a.action_id, a.root_run_id, a.args_digest from pending_actions a
      where a.status = 'pending' and a.root_run_id in (${TOP_LEVEL_RUNS})`,
    [scenario],
  );
  return rows;
}

/** Approves `action` over HTTP; resolves with the answer's status, or 'network error'. */
export async function postApproval(
  api: ScenarioContext['api'],
  action: PendingRow,
): Promise<string> {
  const res = await fetch(`${api.baseUrl}/v1/runs/${action.root_run_id}/decisions`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${api.apiKey}` },
    body: JSON.stringify({
      decisions: [
        { action_id: action.action_id, type: 'approve', args_digest: action.args_digest },
      ],
    }),
    signal: AbortSignal.timeout(30_000),
  }).catch((error: unknown) => String(error));
  return typeof res === 'string' ? 'network error' : String(res.status);
}

/** Waits until the scenario's runs are all in a final status (PAUSED is not final here); false once none finished for `stallMs`. */
async function drainFinal(
  ctx: ScenarioContext,
  expected: number,
  stallMs: number,
): Promise<boolean> {
  let deadline = Date.now() + stallMs;
  let done = -1;
  for (;;) {
    const { rows } = await retrying(() =>
      ctx.db.query<{ n: number }>(
        `select count(*)::int as n from runs where run_id in (${TOP_LEVEL_RUNS}) and status = any($2)`,
        [APPROVAL_SCENARIO, FINAL_STATUSES],
      ),
    );
    const n = rows[0]!.n;
    if (n >= expected) return true;
    if (n > done) {
      done = n;
      deadline = Date.now() + stallMs;
    }
    if (Date.now() > deadline) return false;
    await delay(500);
  }
}

async function checkGoals(ctx: ScenarioContext): Promise<ApprovalScenarioReport['goals']> {
  const { rows } = await ctx.db.query<ApprovalScenarioReport['goals']>(
    `select
       (select count(*)::int from (select idempotency_key from chaos_tool_ledger where tool = $2
                                    group by idempotency_key having count(*) > 1) twice) as "gatedCallsExecutedTwice",
       (select count(*)::int from runs r where r.run_id in (${TOP_LEVEL_RUNS}) and r.status = 'PAUSED'
          and not exists (select 1 from pending_actions a where a.root_run_id = r.run_id and a.status = 'pending')) as "stuckPausedAfterDecided",
       (select count(*)::int from runs where run_id in (${TOP_LEVEL_RUNS}) and status <> 'COMPLETED') as "notCompleted"`,
    [APPROVAL_SCENARIO, CHAOS_GATED_TOOL],
  );
  return rows[0]!;
}
