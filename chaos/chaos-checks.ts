import type pg from 'pg';
import { SCENARIO_RUNS, statusCounts, TOP_LEVEL_RUNS } from './chaos-db.js';
import { CHAOS_TOOLS } from './chaos-registry.js';
import type { IndexRegression } from './checkpoint-sampler.js';
import type { UnexpectedExit } from './chaos-fleet.js';
import type { Submission } from './run-submitter.js';

/** The figures that must be zero. */
export interface ChaosGoals {
  /** Top-level runs accepted but not COMPLETED at the end. */
  lost: number;
  /** Runs with more than one `completed` attempt or more than one RunCompleted event. */
  completedMoreThanOnce: number;
  /** Committed tool calls executed again at or after the epoch that first committed them (a finished batch redone). */
  finishedBatchesExecutedTwice: number;
  /** Committed rows whose writer's epoch was not the run's epoch, committed results no execution of that epoch produced, member runs claimed by a worker not holding their team, writes to finished runs. */
  fencedOutWrites: number;
  /** Checkpoint indexes that went down (audited writes and samples). */
  checkpointIndexBackwards: number;
  /** Histories whose messages and tool call rows do not match their checkpoint index. */
  inconsistentHistories: number;
  /** Worker processes that died on their own after they had started (not the harness's signals). */
  workerCrashes: number;
  /** Continues with input answered 202 whose input is not in the run's history exactly once. */
  continueInputsNotAppliedOnce: number;
}

/** Percentiles of a set of durations. */
export interface Distribution {
  samples: number;
  p50Ms: number | null;
  p95Ms: number | null;
  maxMs: number | null;
}

/** Everything a scenario's checks found. */
export interface ScenarioChecks {
  runs: {
    submitted: number;
    accepted: number;
    completed: number;
    byStatus: Record<string, number>;
  };
  goals: ChaosGoals;
  /** Example ids per non-zero goal, for debugging. */
  examples: Partial<Record<keyof ChaosGoals, unknown[]>>;
  info: Record<string, unknown>;
}

const TOOLS = [...CHAOS_TOOLS];

async function rows<T extends pg.QueryResultRow>(
  db: pg.Pool,
  text: string,
  values: unknown[],
): Promise<T[]> {
  return (await db.query<T>(text, values)).rows;
}

/** What one scenario left behind, for {@link checkScenario}. */
export interface ScenarioTrace {
  scenario: string;
  submissions: readonly Submission[];
  regressions: readonly IndexRegression[];
  /** Workers that exited on their own while the scenario ran. */
  exits: readonly UnexpectedExit[];
}

/** Runs every goal check of docs/reliability.md over one scenario's runs. */
export async function checkScenario(db: pg.Pool, trace: ScenarioTrace): Promise<ScenarioChecks> {
  const { scenario, submissions, regressions } = trace;
  const crashes = trace.exits.filter((e) => e.afterStart);
  const args = [scenario];
  const byStatus = await statusCounts(db, scenario);
  const submitted = Object.values(byStatus).reduce((a, b) => a + b, 0);
  const accepted = submissions.filter((s) => s.runId).map((s) => s.runId!);

  const notCompleted = await rows<{ run_id: string; status: string; error: unknown }>(
    db,
    `select run_id, status, error from runs where run_id in (${TOP_LEVEL_RUNS}) and status <> 'COMPLETED'`,
    args,
  );
  const known = new Set(
    (await rows<{ run_id: string }>(db, TOP_LEVEL_RUNS, args)).map((r) => r.run_id),
  );
  const missing = accepted
    .filter((id) => !known.has(id))
    .map((run_id) => ({ run_id, status: 'missing' }));
  const lost = [...notCompleted, ...missing];

  const completedTwice = await rows<{ run_id: string; attempts: number; events: number }>(
    db,
    `select s.run_id,
       (select count(*)::int from run_attempts a where a.run_id = s.run_id and a.outcome = 'completed') as attempts,
       (select count(*)::int from run_events e where e.run_id = s.run_id and e.type = 'RunCompleted') as events
     from (${SCENARIO_RUNS}) s`,
    args,
  ).then((all) => all.filter((r) => r.attempts > 1 || r.events > 1));

  // A call counts as committed from the first epoch that wrote it finished; any execution at or after that epoch beyond one is a redo.
  const executedTwice = await rows<{
    run_id: string;
    tool_call_id: string;
    epoch: number;
    executions: number;
  }>(
    db,
    `with committed as (
       select run_id, item as tool_call_id, min(row_epoch) as epoch from chaos_write_audit
       where tbl = 'tool_calls' and new_status in ('completed', 'error') and run_id in (${SCENARIO_RUNS})
       group by 1, 2)
     select c.run_id, c.tool_call_id, c.epoch, count(l.id)::int as executions
     from committed c
     join tool_calls t on t.run_id = c.run_id and t.tool_call_id = c.tool_call_id and t.name = any($2)
     left join chaos_tool_ledger l on l.idempotency_key = t.idempotency_key and l.epoch >= c.epoch
     group by 1, 2, 3 having count(l.id) > 1`,
    [scenario, TOOLS],
  );

  // A delegation run twice: committed tool calls of a member run the team never consumed, redone by a sibling for the same call.
  const abandonedMemberWork = await rows<{
    run_id: string;
    parent_run_id: string;
    tool_call_id: string;
  }>(
    db,
    `select c.run_id, c.parent_run_id, t.tool_call_id from runs c
     join tool_calls t on t.run_id = c.run_id and t.name = any($2) and t.status in ('completed', 'error')
     where c.parent_run_id in (${TOP_LEVEL_RUNS})
       and not exists (select 1 from tool_calls p where p.run_id = c.parent_run_id and p.child_run_id = c.run_id)
       and exists (select 1 from runs s where s.parent_run_id = c.parent_run_id and s.run_id <> c.run_id
                   and s.parent_tool_call_id = c.parent_tool_call_id)`,
    [scenario, TOOLS],
  );

  const epochMismatches = await rows<{
    tbl: string;
    run_id: string;
    item: string;
    row_epoch: number;
    run_epoch: number;
  }>(
    db,
    `select tbl, run_id, item, row_epoch, run_epoch from chaos_write_audit
     where run_id in (${SCENARIO_RUNS}) and tbl in ('tool_calls', 'run_messages', 'run_attempts')
       and row_epoch is not null and row_epoch is distinct from run_epoch`,
    args,
  );
  const orphanResults = await rows<{ run_id: string; tool_call_id: string; epoch: number }>(
    db,
    `select t.run_id, t.tool_call_id, t.epoch from tool_calls t
     where t.run_id in (${SCENARIO_RUNS}) and t.name = any($2) and t.status = 'completed'
       and not exists (select 1 from chaos_tool_ledger l where l.idempotency_key = t.idempotency_key and l.epoch = t.epoch)`,
    [scenario, TOOLS],
  );
  const zombieMemberClaims = await rows<{ run_id: string; worker: string; team_holder: string }>(
    db,
    `select run_id, item as worker, parent_holder as team_holder from chaos_write_audit
     where run_id in (${SCENARIO_RUNS}) and tbl = 'member_claims' and parent_holder is distinct from item`,
    args,
  );
  const writesAfterFinish = await rows<{ run_id: string; old_status: string; new_status: string }>(
    db,
    `select run_id, old_status, new_status from chaos_write_audit
     where run_id in (${SCENARIO_RUNS}) and tbl = 'runs' and old_status in ('COMPLETED', 'CANCELLED')`,
    args,
  );

  const auditedBackwards = await rows<{ run_id: string; old_index: number; new_index: number }>(
    db,
    `select run_id, old_index, new_index from chaos_write_audit
     where run_id in (${SCENARIO_RUNS}) and tbl = 'runs' and new_index < old_index`,
    args,
  );
  const scenarioRuns = new Set(
    (await rows<{ run_id: string }>(db, SCENARIO_RUNS, args)).map((r) => r.run_id),
  );
  const sampledBackwards = regressions.filter((r) => scenarioRuns.has(r.runId));

  const inconsistent = await rows<{
    run_id: string;
    index: number;
    messages: number;
    next_idx: number;
    unmatched: number;
  }>(
    db,
    `select r.run_id, r.last_checkpoint_at_message_index as index,
       (select count(*)::int from run_messages m where m.run_id = r.run_id) as messages,
       (select coalesce(max(idx) + 1, 0)::int from run_messages m where m.run_id = r.run_id) as next_idx,
       (select count(*)::int from tool_calls t where t.run_id = r.run_id and t.status <> 'running'
          and not exists (select 1 from run_messages m where m.run_id = r.run_id
                          and m.message->>'role' = 'tool' and m.message->>'toolCallId' = t.tool_call_id))
       + (select count(*)::int from run_messages m where m.run_id = r.run_id and m.message->>'role' = 'tool'
          and not exists (select 1 from tool_calls t where t.run_id = r.run_id and t.tool_call_id = m.message->>'toolCallId'))
       + (select count(*)::int - count(distinct m.message->>'toolCallId')::int from run_messages m
          where m.run_id = r.run_id and m.message->>'role' = 'tool')
         as unmatched
     from runs r where r.run_id in (${SCENARIO_RUNS})`,
    args,
  ).then((all) =>
    all.filter((r) => r.messages !== r.index || r.next_idx !== r.index || r.unmatched > 0),
  );

  const continued = submissions.filter((s) => s.runId && s.continued?.status === 202);
  const continueMisses = await rows<{ run_id: string; input: string; times: number }>(
    db,
    `select c.run_id, c.input,
       (select count(*)::int from run_messages m
         where m.run_id = c.run_id and m.message->>'role' = 'user' and m.message->>'content' = c.input) as times
     from unnest($1::text[], $2::text[]) as c(run_id, input)`,
    [continued.map((s) => s.runId!), continued.map((s) => s.continued!.input)],
  ).then((all) => all.filter((r) => r.times !== 1));

  const goals: ChaosGoals = {
    lost: lost.length,
    completedMoreThanOnce: completedTwice.length,
    finishedBatchesExecutedTwice: executedTwice.length + abandonedMemberWork.length,
    fencedOutWrites:
      epochMismatches.length +
      orphanResults.length +
      zombieMemberClaims.length +
      writesAfterFinish.length,
    checkpointIndexBackwards: auditedBackwards.length + sampledBackwards.length,
    inconsistentHistories: inconsistent.length,
    workerCrashes: crashes.length,
    continueInputsNotAppliedOnce: continueMisses.length,
  };
  const examples: ScenarioChecks['examples'] = {};
  const example = (goal: keyof ChaosGoals, items: unknown[]) => {
    if (items.length > 0) examples[goal] = items.slice(0, 10);
  };
  example('lost', lost);
  example('completedMoreThanOnce', completedTwice);
  example('finishedBatchesExecutedTwice', [
    ...executedTwice,
    ...abandonedMemberWork.map((w) => ({ abandonedMemberRun: w })),
  ]);
  example('fencedOutWrites', [
    ...epochMismatches,
    ...orphanResults,
    ...zombieMemberClaims.map((c) => ({ memberClaimByNonHolder: c })),
    ...writesAfterFinish,
  ]);
  example('checkpointIndexBackwards', [...auditedBackwards, ...sampledBackwards]);
  example('inconsistentHistories', inconsistent);
  example('workerCrashes', crashes);
  example('continueInputsNotAppliedOnce', continueMisses);

  return {
    runs: { submitted, accepted: accepted.length, completed: byStatus.COMPLETED ?? 0, byStatus },
    goals,
    examples,
    info: {
      ...(await scenarioInfo(db, scenario, submissions)),
      continuesWithInput: {
        applied: continued.length,
        refused: submissions
          .filter((s) => s.continued && s.continued.status !== 202)
          .map((s) => s.continued!.status),
      },
      workersFailedToStart: trace.exits
        .filter((e) => !e.afterStart)
        .map((e) => ({ workerId: e.workerId, exit: e.exit })),
    },
  };
}

async function scenarioInfo(
  db: pg.Pool,
  scenario: string,
  submissions: readonly Submission[],
): Promise<Record<string, unknown>> {
  const args = [scenario];
  const reasons = await rows<{ reason: string; n: number }>(
    db,
    `select reason, count(*)::int as n from run_attempts where run_id in (${SCENARIO_RUNS}) group by reason order by reason`,
    args,
  );
  const outcomes = await rows<{ outcome: string | null; n: number }>(
    db,
    `select outcome, count(*)::int as n from run_attempts where run_id in (${SCENARIO_RUNS}) group by outcome order by outcome`,
    args,
  );
  const [ledger] = await rows<{ executions: number; keys: number; repeated: number }>(
    db,
    `select count(*)::int as executions, count(distinct idempotency_key)::int as keys,
       (select count(*)::int from (select 1 from chaos_tool_ledger where run_id in (${SCENARIO_RUNS})
          group by idempotency_key having count(*) > 1) d) as repeated
     from chaos_tool_ledger where run_id in (${SCENARIO_RUNS})`,
    args,
  );
  const extraMembers = await rows<{ team: string; tool_call_id: string; children: unknown }>(
    db,
    `select parent_run_id as team, parent_tool_call_id as tool_call_id,
       json_agg(json_build_object('run_id', run_id, 'status', status, 'epoch', epoch, 'created_at', created_at) order by created_at) as children
     from runs where parent_run_id in (${TOP_LEVEL_RUNS}) group by 1, 2 having count(*) > 1`,
    args,
  );
  const errors = await rows<{ error: unknown; n: number }>(
    db,
    `select error, count(*)::int as n from runs where run_id in (${SCENARIO_RUNS}) and status = 'ERROR' group by 1 order by 2 desc limit 5`,
    args,
  );
  const httpErrors = submissions.flatMap((s) => s.errors);
  return {
    attemptsByReason: Object.fromEntries(reasons.map((r) => [r.reason, r.n])),
    attemptsByOutcome: Object.fromEntries(outcomes.map((r) => [r.outcome ?? 'open', r.n])),
    toolExecutions: ledger?.executions ?? 0,
    toolCallsExecuted: ledger?.keys ?? 0,
    toolCallsReExecutedInFlight: ledger?.repeated ?? 0,
    delegationsWithSeveralMemberRuns: extraMembers.length,
    delegationsWithSeveralMemberRunsSamples: extraMembers.slice(0, 5),
    errorRuns: errors,
    httpRetries: httpErrors.length,
    httpErrorSamples: [...new Set(httpErrors.map((e) => e.slice(0, 80)))].slice(0, 5),
  };
}

/** Time from each fault to the next claim of every top-level run the faulted worker held then. */
export async function recoveryAfter(
  db: pg.Pool,
  faults: readonly { workerId?: string; at: number }[],
): Promise<{
  recovery: Distribution;
  unrecovered: number;
  perFault: { workerId: string; at: number; runs: number; maxMs: number | null }[];
}> {
  const durations: number[] = [];
  const perFault: { workerId: string; at: number; runs: number; maxMs: number | null }[] = [];
  let unrecovered = 0;
  for (const fault of faults) {
    if (!fault.workerId) continue;
    const held = await rows<{ run_id: string; next_ms: number | null }>(
      db,
      `select a.run_id, (extract(epoch from n.started_at) * 1000)::float8 as next_ms
       from run_attempts a join runs r using (run_id)
       left join lateral (select started_at from run_attempts n where n.run_id = a.run_id and n.epoch > a.epoch
                          order by n.epoch limit 1) n on true
       where a.worker_id = $1 and r.parent_run_id is null
         and a.started_at <= to_timestamp($2 / 1000.0)
         and (a.outcome is null or a.outcome = 'superseded')
         and (a.ended_at is null or a.ended_at >= to_timestamp($2 / 1000.0))`,
      [fault.workerId, fault.at],
    );
    const times = held.flatMap((h) =>
      h.next_ms === null ? [] : [Math.max(0, Math.round(h.next_ms - fault.at))],
    );
    unrecovered += held.length - times.length;
    durations.push(...times);
    perFault.push({
      workerId: fault.workerId,
      at: fault.at,
      runs: held.length,
      maxMs: times.length > 0 ? Math.max(...times) : null,
    });
  }
  return { recovery: distribution(durations), unrecovered, perFault };
}

/** Time from FLUSHALL to the first claim after it, for every run unfinished then that needed one. */
export async function recoveryAfterFlush(
  db: pg.Pool,
  runIds: readonly string[],
  flushAt: number,
): Promise<{ recovery: Distribution; finishedOnOriginalAttempt: number }> {
  const claims = await rows<{ run_id: string; next_ms: number | null }>(
    db,
    `select h.run_id, (extract(epoch from min(a.started_at)) * 1000)::float8 as next_ms
     from unnest($1::text[]) as h(run_id)
     left join run_attempts a on a.run_id = h.run_id and a.started_at > to_timestamp($2 / 1000.0)
     group by h.run_id`,
    [runIds, flushAt],
  );
  const durations = claims.flatMap((c) =>
    c.next_ms === null ? [] : [Math.max(0, c.next_ms - flushAt)],
  );
  return {
    recovery: distribution(durations),
    finishedOnOriginalAttempt: claims.length - durations.length,
  };
}

/** p50, p95 and max (nearest rank) of `values`. */
export function distribution(values: readonly number[]): Distribution {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (p: number) =>
    sorted.length === 0
      ? null
      : Math.round(sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!);
  return { samples: sorted.length, p50Ms: at(0.5), p95Ms: at(0.95), maxMs: at(1) };
}
