import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { dirname } from 'node:path';
import type { ChaosGoals, Distribution, ScenarioChecks } from './chaos-checks.js';
import type { ChaosOptions } from './chaos-options.js';
import type { ApprovalScenarioReport } from './approval-scenario.js';
import { formatCapacity, type CapacityScenarioReport } from './capacity-scenario.js';
import type { ScheduleWebhookScenarioReport } from './schedule-webhook-scenario.js';

/** One scenario's section of the report. */
export interface ScenarioReport extends ScenarioChecks {
  scenario: string;
  durationMs: number;
  /** False when some run was still unfinished at the drain deadline. */
  drained: boolean;
  /** Kill (or flush) to the next claim of each run the fault interrupted. */
  recovery: Distribution & {
    measuredFrom: string;
    clearOfOutages?: Distribution;
    clearAndQueueEmpty?: Distribution;
  } & Record<string, unknown>;
  faults: unknown[];
  passed: boolean;
}

/** What `chaos/results/latest.json` holds. */
export interface ChaosReport {
  generatedAt: string;
  options: ChaosOptions;
  machine: { cpus: number; cpuModel: string; node: string };
  passed: boolean;
  scenarios: ScenarioReport[];
  /** Paused runs decided over HTTP during SIGKILLs. */
  approvals?: ApprovalScenarioReport;
  /** Runs on a provider with a quota: SIGKILLs while runs are parked, and a quota storm. */
  capacity?: CapacityScenarioReport;
  /** Schedules firing and webhooks delivered while workers and producers are SIGKILLed. */
  schedulesWebhooks?: ScheduleWebhookScenarioReport;
  logDir: string;
}

/** True when every goal of the scenario is zero and its runs all finished. */
export function scenarioPassed(checks: ScenarioChecks, drained: boolean): boolean {
  return drained && Object.values(checks.goals).every((n) => n === 0);
}

/** Assembles the report. */
export function buildReport(
  options: ChaosOptions,
  scenarios: ScenarioReport[],
  logDir: string,
  approvals?: ApprovalScenarioReport,
  capacity?: CapacityScenarioReport,
  schedulesWebhooks?: ScheduleWebhookScenarioReport,
): ChaosReport {
  return {
    generatedAt: new Date().toISOString(),
    options,
    machine: {
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model ?? 'unknown',
      node: process.version,
    },
    passed:
      scenarios.every((s) => s.passed) &&
      (approvals?.passed ?? true) &&
      (capacity?.passed ?? true) &&
      (schedulesWebhooks?.passed ?? true),
    scenarios,
    ...(approvals && { approvals }),
    ...(capacity && { capacity }),
    ...(schedulesWebhooks && { schedulesWebhooks }),
    logDir,
  };
}

/** Writes the report as JSON to `path`. */
export function writeReport(path: string, report: ChaosReport): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(report, null, 2)}\n`);
}

const GOAL_LABELS: Record<keyof ChaosGoals, string> = {
  lost: 'lost',
  completedMoreThanOnce: 'completed more than once',
  finishedBatchesExecutedTwice: 'finished tool batches executed twice',
  fencedOutWrites: 'writes accepted from a fenced-out epoch',
  checkpointIndexBackwards: 'checkpoint index going backwards',
  inconsistentHistories: 'half-written or inconsistent histories',
  workerCrashes: 'worker processes crashed',
  continueInputsNotAppliedOnce: 'continue inputs not applied exactly once',
};

/** The report as a text table, one column per scenario. */
export function formatReport(report: ChaosReport): string {
  const columns = report.scenarios;
  const rows: [string, ...string[]][] = [
    ['scenario', ...columns.map((s) => s.scenario)],
    ['duration', ...columns.map((s) => `${Math.round(s.durationMs / 1000)} s`)],
    ['runs submitted', ...columns.map((s) => String(s.runs.submitted))],
    ['runs completed', ...columns.map((s) => String(s.runs.completed))],
    ...(Object.keys(GOAL_LABELS) as (keyof ChaosGoals)[]).map((goal): [string, ...string[]] => [
      `${GOAL_LABELS[goal]} (goal 0)`,
      ...columns.map((s) => String(s.goals[goal])),
    ]),
    ['recovery p50 / p95', ...columns.map((s) => percentiles(s.recovery))],
    [
      '  kills clear of restarts',
      ...columns.map((s) =>
        s.recovery.clearOfOutages ? percentiles(s.recovery.clearOfOutages) : '-',
      ),
    ],
    [
      '  ... and with no job waiting',
      ...columns.map((s) =>
        s.recovery.clearAndQueueEmpty ? percentiles(s.recovery.clearAndQueueEmpty) : '-',
      ),
    ],
    ['passed', ...columns.map((s) => (s.passed ? 'yes' : 'NO'))],
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const lines = rows.map((r) =>
    r.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  '),
  );
  const sections = [
    report.approvals && formatApprovals(report.approvals),
    report.capacity && formatCapacity(report.capacity),
    report.schedulesWebhooks && formatSchedulesWebhooks(report.schedulesWebhooks),
  ].filter((section) => section !== undefined);
  return `${columns.length > 0 ? `${lines.join('\n')}\n` : ''}${sections.map((section) => `\n${section}\n`).join('')}\n${report.passed ? 'every goal met' : 'GOALS MISSED'}`;
}

function percentiles(d: Distribution): string {
  return `${ms(d.p50Ms)} / ${ms(d.p95Ms)} (n=${d.samples})`;
}

function ms(value: number | null): string {
  return value === null ? '-' : `${value} ms`;
}

function formatApprovals(a: ApprovalScenarioReport): string {
  return [
    `approvals: ${a.runs.completed}/${a.runs.submitted} paused runs completed in ${Math.round(a.durationMs / 1000)} s, ${a.kills} SIGKILLs,`,
    `  ${a.decisions.posted} decisions posted (${a.decisions.duplicatesPosted} duplicates; answers ${JSON.stringify(a.decisions.answers)}),`,
    `  gated tool executions ${a.gatedExecutions} for ${a.gatedCallsExecuted} gated calls; ${a.gatedCallsInterrupted} approved calls cut off by a kill after their claim (not run again)`,
    `  gated calls executed twice (goal 0): ${a.goals.gatedCallsExecutedTwice}`,
    `  runs stuck PAUSED after every action was decided (goal 0): ${a.goals.stuckPausedAfterDecided}`,
    `  runs not COMPLETED (goal 0): ${a.goals.notCompleted}`,
    `  passed: ${a.passed ? 'yes' : 'NO'}`,
  ].join('\n');
}

function formatSchedulesWebhooks(r: ScheduleWebhookScenarioReport): string {
  const workerKills = r.kills.filter((k) => k.kind === 'sigkill-worker').length;
  return [
    `schedules-webhooks: ${Math.round(r.durationMs / 1000)} s, ${workerKills} worker and ${r.kills.length - workerKills} producer SIGKILLs, receiver down ${r.receiverDown.fromMs}-${r.receiverDown.toMs} ms,`,
    `  firings ${JSON.stringify(r.firings)}; runs ${JSON.stringify(r.runs)}`,
    `  events ${JSON.stringify(r.events)}; ${r.requests.received} requests, ${r.requests.accepted} accepted; ${r.decisions.posted} approvals posted ${JSON.stringify(r.decisions.answers)}`,
    `  firings lost (goal 0): ${r.goals.firingsLost}`,
    `  firings doubled (goal 0): ${r.goals.firingsDoubled}`,
    `  notifications lost (goal 0): ${r.goals.notificationsLost}`,
    `  notifications out of order per run (goal 0): ${r.goals.outOfOrder}`,
    `  requests failing signature verification (goal 0): ${r.goals.badSignatures}`,
    `  drained: ${r.drained ? 'yes' : 'NO'}; passed: ${r.passed ? 'yes' : 'NO'}`,
  ].join('\n');
}
