import { setTimeout as delay } from 'node:timers/promises';
import { DELEGATE_TOOL_NAME } from '@cairn/engine';
import {
  firstUserInput,
  startFakeOpenAIServer,
  toolResults,
  type FakeOpenAIServer,
  type ScriptContext,
  type ScriptedReply,
} from '@cairn/engine/testing';
import {
  checkScenario,
  recoveryAfter,
  type ChaosGoals,
  type Distribution,
} from './chaos-checks.js';
import { retrying, SCENARIO_RUNS, statusCounts } from './chaos-db.js';
import type { ChaosFleet, ChaosWorker } from './chaos-fleet.js';
import { CHAOS_RESEARCHER } from './chaos-registry.js';
import { submitRuns } from './run-submitter.js';
import { drain, type FaultRecord, type ScenarioContext } from './scenario-context.js';
import { seededRandom } from './seeded-random.js';
import { formatSpend, spendCheck, type SpendCheck } from './spend-check.js';

/** The capacity scenario's name (its runs' `chaos_scenario`). */
export const CAPACITY_SCENARIO = 'capacity';

/** The provider's model, by its id on the wire; the workers run every entity on it (`CAIRN_MODEL`). */
const MODEL = 'chaos-capacity';
/** Its `Model.name`, as `CAIRN_MODEL_LIMITS` names it. */
const MODEL_NAME = `openai-chat:${MODEL}`;
/** Requests the provider takes at once before the storm, and the fleet's configured limit throughout. */
const QUOTA_CONCURRENCY = 4;
/** How long each answer of the provider takes. */
const LATENCY_MS = 200;
/** The scenario's workers' slots: ids `w10-g1`... never collide with the other scenarios' workers'. */
const FIRST_SLOT = 10;
/** How long the storm waits for the fleet to ask at its full limit before it hits anyway. */
const STORM_WAIT_MS = 60_000;
/** The least time between two kills. */
const KILL_EVERY_MS = 4_000;
/** How long a kill waits for a second worker to serve before it is left out. */
const SURVIVOR_WAIT_MS = 90_000;
/** How long a kill waits for a moment when some run is parked before it hits anyway. */
const PARKED_WAIT_MS = 20_000;

/** Options of {@link runCapacityScenario}. */
export interface CapacityScenarioOptions {
  /** Team runs submitted. */
  runs: number;
  /** SIGKILLs, each at a moment when some run is parked for capacity. */
  kills: number;
  workers: number;
  seed: number;
  drainMs: number;
  /** A fleet of workers on the harness's configuration with `env` over it (not started). */
  fleetWith(env: Record<string, string>): ChaosFleet;
}

/** What the capacity scenario found; every goal is 0 when it passed. */
export interface CapacityScenarioReport {
  scenario: string;
  durationMs: number;
  drained: boolean;
  runs: {
    submitted: number;
    accepted: number;
    completed: number;
    byStatus: Record<string, number>;
  };
  /** SIGKILLs, and how many of them hit while some run was parked. */
  kills: { total: number; whileParked: number };
  /** When the provider halved its quota (ms from the start), and its concurrency before and after. */
  storm: { atMs: number; from: number; to: number };
  /** What the provider answered: requests it served, and 429s it sent. */
  provider: { accepted: number; rejected: number };
  /** Attempts that ended parked, claims with reason `capacity`, and the most parks of one run. */
  parks: { total: number; capacityClaims: number; maxPerRun: number };
  /** Kill to the next claim of each run the killed worker held. */
  recovery: Distribution;
  /** The provider's bill against the runs' committed usage. */
  spend: SpendCheck;
  goals: {
    /** Top-level runs accepted but not COMPLETED at the end. */
    lost: number;
    /** Runs (members included) that ended in ERROR over a 429. */
    failedBy429: number;
    /** Committed tool calls executed again at or after the epoch that committed them. */
    batchesExecutedTwice: number;
    /** Billed responses no committed history holds, beyond one per run a kill interrupted. */
    responsesUncountedBeyondInterruptedRuns: number;
    /** Responses in committed histories beyond what the provider billed (a response counted twice). */
    responsesRecordedNotBilled: number;
  } & Omit<ChaosGoals, 'lost' | 'finishedBatchesExecutedTwice'>;
  examples: Record<string, unknown[]>;
  info: Record<string, unknown>;
  faults: FaultRecord[];
  passed: boolean;
}

/**
 * The provider's side of the chaos team's flow (the chaos registry's
 * scripts): the team delegates once and summarizes; the researcher
 * searches, fetches each of three results in its own batch and reports.
 */
function chaosFlow(context: ScriptContext): ScriptedReply {
  const { messages } = context;
  if (context.tools.some((t) => t.name === DELEGATE_TOOL_NAME)) {
    const delegations = toolResults(messages, DELEGATE_TOOL_NAME);
    if (delegations.length === 0)
      return {
        toolCalls: [
          {
            name: DELEGATE_TOOL_NAME,
            arguments: { member: CHAOS_RESEARCHER, task: firstUserInput(messages) },
          },
        ],
      };
    return { text: `Summary:\n${delegations.at(-1)!.content}` };
  }
  if (toolResults(messages, 'chaos_search').length === 0)
    return {
      toolCalls: [{ name: 'chaos_search', arguments: { query: firstUserInput(messages) } }],
    };
  const fetches = toolResults(messages, 'chaos_fetch_detail');
  const next = ['result-a', 'result-b', 'result-c'][fetches.length];
  if (next) return { toolCalls: [{ name: 'chaos_fetch_detail', arguments: { item: next } }] };
  return { text: `Research report.\n${fetches.map((f) => `- ${f.content}`).join('\n')}` };
}

/**
 * Model capacity under faults: a fleet on an OpenAI-compatible provider
 * with a quota (the fake server: 429 with retry-after past it), the fleet's
 * limit set to that quota, `runs` team runs. Workers are SIGKILLed while
 * runs are parked (and others hold permits), and a quota storm halves the
 * provider's concurrency mid-run, under the fleet's configured limit: the
 * fleet learns it from 429s. Goals: no run lost, none failed by a 429, no
 * committed tool batch executed twice, at most one billed response per kill
 * missing from the committed histories and none counted twice (and every
 * other check of the fleet scenario).
 */
export async function runCapacityScenario(
  ctx: ScenarioContext,
  options: CapacityScenarioOptions,
): Promise<CapacityScenarioReport> {
  const random = seededRandom(options.seed + 19);
  const server = await startFakeOpenAIServer({
    decide: chaosFlow,
    latencyMs: LATENCY_MS,
    quota: { perModel: { [MODEL]: { concurrency: QUOTA_CONCURRENCY } } },
  });
  const fleet = options.fleetWith({
    CAIRN_MODEL: MODEL_NAME,
    OPENAI_BASE_URL: server.url,
    CAIRN_MODEL_LIMITS: JSON.stringify([{ model: MODEL_NAME, concurrency: QUOTA_CONCURRENCY }]),
    CAIRN_CAPACITY_WAIT_MS: '200',
    WORKER_CONCURRENCY: '4',
  });
  const killFleet = () => {
    for (const w of fleet.all) if (w.app.alive) w.app.proc.kill('SIGKILL');
  };
  process.on('exit', killFleet);
  try {
    const workers = Array.from({ length: options.workers }, (_, i) => fleet.spawn(FIRST_SLOT + i));
    await Promise.all(workers.map((w) => w.app.waitForLog('worker started', 120_000)));
    return await drive(ctx, options, fleet, server, random);
  } finally {
    await fleet.stopAll().catch(() => undefined);
    process.off('exit', killFleet);
    await server.close();
  }
}

async function drive(
  ctx: ScenarioContext,
  options: CapacityScenarioOptions,
  fleet: ChaosFleet,
  server: FakeOpenAIServer,
  random: () => number,
): Promise<CapacityScenarioReport> {
  const startedAt = Date.now();
  const submitting = submitRuns({
    ...ctx.api,
    scenario: CAPACITY_SCENARIO,
    count: options.runs,
    spreadMs: 2_000,
  });
  const faults: FaultRecord[] = [];
  // The storm: once the fleet asks at its full limit, the provider halves its quota under it.
  const stormAt = await untilAccepted(server, 2 * QUOTA_CONCURRENCY, STORM_WAIT_MS);
  server.setQuota(MODEL, { concurrency: QUOTA_CONCURRENCY / 2 });
  const stormAtMs = stormAt - startedAt;
  faults.push({
    kind: 'quota-storm',
    plannedAtMs: stormAtMs,
    atMs: stormAtMs,
    at: stormAt,
    detail: { concurrency: QUOTA_CONCURRENCY / 2, answeredBefore: server.quota.accepted(MODEL) },
  });
  ctx.log(
    `  [${CAPACITY_SCENARIO}] quota storm: the provider takes ${QUOTA_CONCURRENCY / 2} requests at once (was ${QUOTA_CONCURRENCY}; the fleet's limit stays ${QUOTA_CONCURRENCY})`,
  );
  for (let k = 0; k < options.kills; k++) {
    // Kills a few seconds apart: each one's runs are taken over (lock + stalled check) before the next.
    await delay(KILL_EVERY_MS);
    await untilServing(fleet, 2, SURVIVOR_WAIT_MS);
    const parkedNow = await untilParked(ctx, PARKED_WAIT_MS);
    const victim = await pickHolder(ctx, fleet, random);
    if (!victim) continue;
    const at = Date.now();
    await fleet.kill(victim);
    const replacement = fleet.spawn(victim.slot);
    faults.push({
      kind: 'sigkill',
      plannedAtMs: at - startedAt,
      atMs: at - startedAt,
      at,
      workerId: victim.id,
      detail: { parked: parkedNow, replacement: replacement.id },
    });
    ctx.log(
      `  [${CAPACITY_SCENARIO}] SIGKILL ${victim.id} with ${parkedNow} runs parked -> ${replacement.id}`,
    );
  }
  const submissions = await submitting;
  const accepted = submissions.filter((s) => s.runId).length;
  const drained = await drain(ctx, CAPACITY_SCENARIO, accepted, options.drainMs);

  const checks = await checkScenario(ctx.db, {
    scenario: CAPACITY_SCENARIO,
    submissions,
    regressions: [],
    exits: fleet.unexpectedExits,
  });
  const kills = faults.filter((f) => f.kind === 'sigkill');
  const { recovery } = await recoveryAfter(ctx.db, kills);
  const failedBy429 = await ctx.db.query<{ run_id: string; error: unknown }>(
    `select run_id, error from runs where run_id in (${SCENARIO_RUNS}) and status = 'ERROR'
        and (error::text ilike '%429%' or error::text ilike '%rate limit%')`,
    [CAPACITY_SCENARIO],
  );
  const { rows: parkRows } = await ctx.db.query<{
    parks: number;
    claims: number;
    max_parks: number;
  }>(
    `select coalesce(sum(parks), 0)::int as parks, coalesce(sum(claims), 0)::int as claims, coalesce(max(parks), 0)::int as max_parks
       from (select count(*) filter (where outcome = 'parked') as parks, count(*) filter (where reason = 'capacity') as claims
               from run_attempts where run_id in (${SCENARIO_RUNS}) group by run_id) per_run`,
    [CAPACITY_SCENARIO],
  );
  const spend = await spendCheck(
    ctx.db,
    CAPACITY_SCENARIO,
    { responses: server.quota.accepted(MODEL), tokens: server.quota.tokens(MODEL) },
    kills,
  );
  const { lost, finishedBatchesExecutedTwice, ...otherGoals } = checks.goals;
  const goals: CapacityScenarioReport['goals'] = {
    lost,
    failedBy429: failedBy429.rows.length,
    batchesExecutedTwice: finishedBatchesExecutedTwice,
    responsesUncountedBeyondInterruptedRuns: Math.max(
      0,
      spend.uncountedResponses - spend.runsInterruptedByKills,
    ),
    responsesRecordedNotBilled: Math.max(0, -spend.uncountedResponses),
    ...otherGoals,
  };
  const examples: Record<string, unknown[]> = { ...checks.examples };
  if (failedBy429.rows.length > 0) examples.failedBy429 = failedBy429.rows.slice(0, 10);
  return {
    scenario: CAPACITY_SCENARIO,
    durationMs: Date.now() - startedAt,
    drained,
    runs: checks.runs,
    kills: {
      total: kills.length,
      whileParked: kills.filter((k) => Number(k.detail.parked) > 0).length,
    },
    storm: { atMs: stormAtMs, from: QUOTA_CONCURRENCY, to: QUOTA_CONCURRENCY / 2 },
    provider: { accepted: server.quota.accepted(MODEL), rejected: server.quota.rejected(MODEL) },
    parks: {
      total: parkRows[0]?.parks ?? 0,
      capacityClaims: parkRows[0]?.claims ?? 0,
      maxPerRun: parkRows[0]?.max_parks ?? 0,
    },
    recovery,
    spend,
    goals,
    examples,
    info: checks.info,
    faults,
    passed: drained && Object.values(goals).every((n) => n === 0),
  };
}

/** Waits (up to `waitMs`) until the provider has answered `count` requests; resolves with the time then. */
async function untilAccepted(
  server: FakeOpenAIServer,
  count: number,
  waitMs: number,
): Promise<number> {
  const deadline = Date.now() + waitMs;
  while (server.quota.accepted(MODEL) < count && Date.now() < deadline) await delay(50);
  return Date.now();
}

/** The scenario's runs parked for capacity right now (RUNNING, no worker holding them, waiting set). */
async function parkedRuns(ctx: ScenarioContext): Promise<number> {
  const { rows } = await ctx.db.query<{ n: number }>(
    `select count(*)::int as n from runs where run_id in (${SCENARIO_RUNS}) and waiting is not null`,
    [CAPACITY_SCENARIO],
  );
  return rows[0]!.n;
}

/** Waits until some run is parked (up to `waitMs`); resolves with how many are. */
async function untilParked(ctx: ScenarioContext, waitMs: number): Promise<number> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const n = await retrying(() => parkedRuns(ctx)).catch(() => 0);
    if (n > 0 || Date.now() > deadline) return n;
    const counts = await retrying(() => statusCounts(ctx.db, CAPACITY_SCENARIO)).catch(() => ({}));
    if (
      Object.keys(counts).length > 0 &&
      Object.keys(counts).every((s) => s !== 'RUNNING' && s !== 'PENDING')
    )
      return 0;
    await delay(100);
  }
}

/**
 * Waits (up to `waitMs`) until `count` workers of the fleet serve: a kill
 * must leave a worker to take its runs over, or it measures a replacement's
 * start-up (tens of seconds on a loaded machine), not the recovery.
 */
async function untilServing(fleet: ChaosFleet, count: number, waitMs: number): Promise<void> {
  const deadline = Date.now() + waitMs;
  while (fleet.serving(1_000).length < count && Date.now() < deadline) await delay(250);
}

/** A started worker of the scenario's fleet that holds one of its runs now (any started one if none does), leaving another one serving. */
async function pickHolder(
  ctx: ScenarioContext,
  fleet: ChaosFleet,
  random: () => number,
): Promise<ChaosWorker | undefined> {
  const serving = fleet.serving(1_000);
  if (serving.length < 2) return undefined;
  const { rows } = await retrying(() =>
    ctx.db.query<{ worker_id: string }>(
      `select distinct worker_id from run_attempts where run_id in (${SCENARIO_RUNS}) and ended_at is null`,
      [CAPACITY_SCENARIO],
    ),
  );
  const holding = new Set(rows.map((r) => r.worker_id));
  const holders = serving.filter((w) => holding.has(w.id));
  const pool = holders.length > 0 ? holders : serving;
  return pool[Math.floor(random() * pool.length)];
}

/** The scenario's section of the text report. */
export function formatCapacity(c: CapacityScenarioReport): string {
  const storm = `quota halved at ${Math.round(c.storm.atMs / 1000)} s (${c.storm.from} -> ${c.storm.to} requests at once; the fleet's limit stays ${c.storm.from})`;
  const recovery =
    c.recovery.samples > 0
      ? `${c.recovery.p50Ms} ms / ${c.recovery.p95Ms} ms (n=${c.recovery.samples})`
      : '-';
  return [
    `capacity: ${c.runs.completed}/${c.runs.accepted} team runs completed in ${Math.round(c.durationMs / 1000)} s, ${c.kills.total} SIGKILLs (${c.kills.whileParked} while runs were parked), ${storm}`,
    `  provider: ${c.provider.accepted} requests answered, ${c.provider.rejected} answered 429; ${c.parks.total} parks, ${c.parks.capacityClaims} claims with reason capacity (at most ${c.parks.maxPerRun} parks for one run); recovery p50 / p95 ${recovery}`,
    `  runs lost (goal 0): ${c.goals.lost}`,
    `  runs failed by a 429 (goal 0): ${c.goals.failedBy429}`,
    `  finished tool batches executed twice (goal 0): ${c.goals.batchesExecutedTwice}`,
    ...formatSpend(c.spend),
    `  other checks (goal 0): completed more than once ${c.goals.completedMoreThanOnce}, fenced-out writes ${c.goals.fencedOutWrites}, checkpoint index backwards ${c.goals.checkpointIndexBackwards}, inconsistent histories ${c.goals.inconsistentHistories}, worker crashes ${c.goals.workerCrashes}, continue inputs not applied once ${c.goals.continueInputsNotAppliedOnce}`,
    `  passed: ${c.passed ? 'yes' : 'NO'}`,
  ].join('\n');
}
