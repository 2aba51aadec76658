import type pg from 'pg';
import { checkScenario, recoveryAfter, recoveryAfterFlush } from './chaos-checks.js';
import type { UnexpectedExit } from './chaos-fleet.js';
import { scenarioPassed, type ScenarioReport } from './chaos-report.js';
import type { FleetScenarioRecord } from './fleet-scenario.js';
import type { FlushScenarioRecord } from './flush-scenario.js';

/** What the scenarios left for the checks. */
export interface ScenarioTraces {
  fleetRun: FleetScenarioRecord;
  flushRun: FlushScenarioRecord;
  /** Workers that exited on their own, during either scenario. */
  exits: readonly UnexpectedExit[];
  /** The workers' lock duration: a kill closer than three of it to a server restart counts as during the restart. */
  lockMs: number;
}

/** Runs every check on both scenarios and measures recovery: kills (all, clear of restarts, with no job waiting), zombies, the flush. */
export async function scenarioReports(
  db: pg.Pool,
  trace: ScenarioTraces,
): Promise<ScenarioReport[]> {
  const { fleetRun, flushRun } = trace;
  const kills = fleetRun.faults.filter((f) => f.kind === 'sigkill');
  const zombies = fleetRun.faults.filter((f) => f.kind === 'sigstop');
  const killRecovery = await recoveryAfter(db, kills);
  const outages = fleetRun.faults
    .filter((f) => f.kind === 'redis-restart' || f.kind === 'postgres-restart')
    .map((f) => ({ from: f.at, to: f.at + Number(f.detail.downMs ?? 0) }));
  const clearKills = kills.filter((k) =>
    outages.every((o) => o.to < k.at - 1_000 || o.from > k.at + 3 * trace.lockMs),
  );
  const clearRecovery = await recoveryAfter(db, clearKills);
  const idleRecovery = await recoveryAfter(
    db,
    clearKills.filter((k) => k.detail.waiting === 0),
  );
  const zombieRecovery = await recoveryAfter(db, zombies);
  const exitsBetween = (from: number, to: number) =>
    trace.exits.filter((e) => e.at >= from && e.at < to);
  const fleetChecks = await checkScenario(db, {
    scenario: fleetRun.scenario,
    submissions: fleetRun.submissions,
    regressions: fleetRun.sampler.regressions,
    exits: exitsBetween(0, flushRun.startedAt),
  });
  const flushChecks = await checkScenario(db, {
    scenario: flushRun.scenario,
    submissions: flushRun.submissions,
    regressions: flushRun.sampler.regressions,
    exits: exitsBetween(flushRun.startedAt, Infinity),
  });
  const flushRecovery = await recoveryAfterFlush(
    db,
    flushRun.unfinishedAtFlush.map((r) => r.run_id),
    flushRun.flushAt,
  );
  const scenarios: ScenarioReport[] = [
    {
      scenario: fleetRun.scenario,
      durationMs: fleetRun.durationMs,
      drained: fleetRun.drained,
      ...fleetChecks,
      recovery: {
        ...killRecovery.recovery,
        measuredFrom: 'SIGKILL',
        unrecovered: killRecovery.unrecovered,
        clearOfOutages: clearRecovery.recovery,
        clearAndQueueEmpty: idleRecovery.recovery,
        perKill: killRecovery.perFault,
        zombieTakeover: zombieRecovery.recovery,
      },
      info: {
        ...fleetChecks.info,
        checkpointSamples: fleetRun.sampler.samples,
        faultWindowMs: fleetRun.schedule.windowMs,
      },
      faults: fleetRun.faults,
      passed: scenarioPassed(fleetChecks, fleetRun.drained),
    },
    {
      scenario: flushRun.scenario,
      durationMs: flushRun.durationMs,
      drained: flushRun.drained,
      ...flushChecks,
      recovery: {
        ...flushRecovery.recovery,
        measuredFrom: 'FLUSHALL',
        finishedOnOriginalAttempt: flushRecovery.finishedOnOriginalAttempt,
      },
      info: {
        ...flushChecks.info,
        checkpointSamples: flushRun.sampler.samples,
        unfinishedAtFlush: flushRun.unfinishedAtFlush.length,
        pendingAtFlush: flushRun.unfinishedAtFlush.filter((r) => r.status === 'PENDING').length,
      },
      faults: [
        {
          kind: 'redis-flushall',
          at: flushRun.flushAt,
          atMs: flushRun.flushAt - flushRun.startedAt,
        },
      ],
      passed: scenarioPassed(flushChecks, flushRun.drained),
    },
  ];
  return scenarios;
}
