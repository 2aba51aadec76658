import { setTimeout as delay } from 'node:timers/promises';
import { IDLE_STATUSES } from '@cairn/engine';
import type pg from 'pg';
import type { ChaosFleet } from './chaos-fleet.js';
import type { ChaosServices } from './chaos-services.js';
import { retrying, statusCounts } from './chaos-db.js';

/** What a scenario drives: the servers, the worker fleet, the producer's API and the harness's database pool. */
export interface ScenarioContext {
  db: pg.Pool;
  fleet: ChaosFleet;
  services: ChaosServices;
  api: { baseUrl: string; apiKey: string };
  /** The workers' `CAIRN_LOCK_MS`. */
  lockMs: number;
  /** Jobs waiting in the run queue for a free worker slot right now. */
  waitingJobs(): Promise<number>;
  log(message: string): void;
}

/** A fault as it was injected. */
export interface FaultRecord {
  kind: string;
  /** When the schedule asked for it, from the scenario's start. */
  plannedAtMs: number;
  /** When it was injected, from the scenario's start. */
  atMs: number;
  /** Wall-clock time of injection (ms since the epoch), to compare with attempt timestamps. */
  at: number;
  workerId?: string;
  detail: Record<string, unknown>;
  error?: string;
}

/**
 * Waits until the scenario's `expected` top-level runs are all terminal; false
 * once no run has finished for `stallMs` (a slow machine only makes it longer,
 * a stuck run still ends it).
 */
export async function drain(
  ctx: ScenarioContext,
  scenario: string,
  expected: number,
  stallMs: number,
): Promise<boolean> {
  let deadline = Date.now() + stallMs;
  let finished = -1;
  let lastLog = 0;
  for (;;) {
    const counts = await retrying(() => statusCounts(ctx.db, scenario));
    const total = Object.values(counts).reduce((a, b) => a + b, 0);
    const terminal = IDLE_STATUSES.reduce((sum, s) => sum + (counts[s] ?? 0), 0);
    if (total >= expected && terminal === total) return true;
    if (terminal > finished) {
      finished = terminal;
      deadline = Date.now() + stallMs;
    }
    if (Date.now() > deadline) return false;
    if (Date.now() - lastLog > 10_000) {
      lastLog = Date.now();
      ctx.log(`  draining ${scenario}: ${JSON.stringify(counts)}`);
    }
    await delay(500);
  }
}
