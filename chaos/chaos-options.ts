import { parseArgs } from 'node:util';

/** What `npm run chaos` was asked for. */
export interface ChaosOptions {
  /** Runs pushed through the fault-injected fleet scenario. */
  runs: number;
  /** SIGKILLs during that scenario. */
  kills: number;
  /** Seeds the fault schedule: the same seed gives the same schedule. */
  seed: number;
  quick: boolean;
  /** SIGSTOP/SIGCONT zombies (and as many SIGTERMs); default one per 20 kills, at least one. */
  zombies?: number;
  /** Runs of the separate Redis FLUSHALL scenario. */
  flushRuns: number;
  /** Keep the processes' logs even when every goal is met. */
  keepLogs: boolean;
  /** `--scenario`: run this scenario alone (`fleet` runs the fleet and redis-flush scenarios); unset: all. */
  scenario?: ChaosScenarioName;
}

/** The scenarios `--scenario` can pick. */
export const CHAOS_SCENARIOS = ['fleet', 'approvals', 'capacity', 'schedules-webhooks'] as const;
/** One of {@link CHAOS_SCENARIOS}. */
export type ChaosScenarioName = (typeof CHAOS_SCENARIOS)[number];

/** Defaults of the full matrix and of `--quick`. */
export const FULL_DEFAULTS = { runs: 1000, kills: 100 } as const;
/** `--quick`: about 50 runs and 5 kills, one of each other fault. */
export const QUICK_DEFAULTS = { runs: 50, kills: 5 } as const;
/** The default seed. */
export const DEFAULT_SEED = 1;

function positiveInt(name: string, raw: string | undefined, fallback: number, min = 1): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < min)
    throw new Error(`--${name} must be an integer >= ${min}, got "${raw}"`);
  return value;
}

/** Parses `--runs`, `--kills`, `--seed`, `--zombies`, `--quick`, `--flush-runs`, `--keep-logs`, `--scenario`; throws naming a bad flag. */
export function parseChaosOptions(argv: readonly string[]): ChaosOptions {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      runs: { type: 'string' },
      kills: { type: 'string' },
      seed: { type: 'string' },
      zombies: { type: 'string' },
      quick: { type: 'boolean', default: false },
      'flush-runs': { type: 'string' },
      'keep-logs': { type: 'boolean', default: false },
      scenario: { type: 'string' },
    },
    strict: true,
  });
  const defaults = values.quick ? QUICK_DEFAULTS : FULL_DEFAULTS;
  const runs = positiveInt('runs', values.runs, defaults.runs);
  const scenario = values.scenario;
  if (scenario !== undefined && !(CHAOS_SCENARIOS as readonly string[]).includes(scenario))
    throw new Error(`--scenario must be one of ${CHAOS_SCENARIOS.join(', ')}, got "${scenario}"`);
  return {
    runs,
    kills: positiveInt('kills', values.kills, defaults.kills, 0),
    seed: positiveInt('seed', values.seed, DEFAULT_SEED, 0),
    quick: values.quick ?? false,
    ...(values.zombies === undefined ? {} : { zombies: positiveInt('zombies', values.zombies, 1) }),
    flushRuns: positiveInt('flush-runs', values['flush-runs'], Math.max(60, Math.round(runs / 5))),
    keepLogs: values['keep-logs'] ?? false,
    ...(scenario !== undefined && { scenario: scenario as ChaosScenarioName }),
  };
}
