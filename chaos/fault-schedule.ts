import { seededRandom } from './seeded-random.js';

/** One fault of the fleet scenario, `atMs` after it starts; `pick` in [0, 1) chooses the worker among those serving. */
export type Fault =
  | { kind: 'sigkill'; atMs: number; pick: number }
  | { kind: 'sigstop'; atMs: number; pick: number }
  | { kind: 'sigterm'; atMs: number; pick: number }
  | { kind: 'redis-restart'; atMs: number }
  | { kind: 'postgres-restart'; atMs: number; downMs: number };

/** The faults of one scenario and how long the fault window lasts. */
export interface FaultSchedule {
  seed: number;
  windowMs: number;
  faults: Fault[];
}

/** Average time between two SIGKILLs. */
export const KILL_INTERVAL_MS = 3_000;
/** The shortest fault window, so the one-off faults do not pile up. */
const MIN_WINDOW_MS = 40_000;

/**
 * Builds the fault schedule from the seed alone: `kills` SIGKILLs spread over
 * the window with jitter, one Redis restart and one Postgres restart, and one
 * SIGSTOP and one SIGTERM per 20 kills (at least one each) unless `zombies` says how many.
 */
export function buildFaultSchedule(options: {
  kills: number;
  seed: number;
  zombies?: number;
}): FaultSchedule {
  const random = seededRandom(options.seed);
  const windowMs = Math.max(MIN_WINDOW_MS, options.kills * KILL_INTERVAL_MS);
  const faults: Fault[] = [];
  const slot = windowMs / Math.max(1, options.kills);
  for (let i = 0; i < options.kills; i++) {
    faults.push({
      kind: 'sigkill',
      atMs: Math.round(i * slot + random() * slot * 0.8),
      pick: random(),
    });
  }
  const around = (fraction: number) => Math.round(windowMs * (fraction + (random() - 0.5) * 0.06));
  faults.push({ kind: 'redis-restart', atMs: around(0.4) });
  faults.push({
    kind: 'postgres-restart',
    atMs: around(0.75),
    downMs: 2_000 + Math.round(random() * 2_000),
  });
  const extra = options.zombies ?? Math.max(1, Math.round(options.kills / 20));
  for (let i = 0; i < extra; i++) {
    const base = i / extra;
    faults.push({
      kind: 'sigstop',
      atMs: Math.round(windowMs * (base + 0.2 / extra + (random() * 0.05) / extra)),
      pick: random(),
    });
    faults.push({
      kind: 'sigterm',
      atMs: Math.round(windowMs * (base + 0.55 / extra + (random() * 0.05) / extra)),
      pick: random(),
    });
  }
  faults.sort((a, b) => a.atMs - b.atMs);
  return { seed: options.seed, windowMs, faults };
}
