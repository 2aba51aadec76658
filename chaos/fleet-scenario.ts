import { setTimeout as delay } from 'node:timers/promises';
import type { ChaosWorker } from './chaos-fleet.js';
import { heldRuns, releasedAttempts, retrying, statusCounts } from './chaos-db.js';
import { CheckpointSampler } from './checkpoint-sampler.js';
import type { Fault, FaultSchedule } from './fault-schedule.js';
import { submitRuns, type Submission } from './run-submitter.js';
import { drain, type FaultRecord, type ScenarioContext } from './scenario-context.js';

/** The fleet scenario's name (its runs' `chaos_scenario`). */
export const FLEET_SCENARIO = 'fleet';

/** What the fleet scenario did, for the checks. */
export interface FleetScenarioRecord {
  scenario: string;
  startedAt: number;
  durationMs: number;
  schedule: FaultSchedule;
  faults: FaultRecord[];
  submissions: Submission[];
  sampler: CheckpointSampler;
  drained: boolean;
}

/**
 * Pushes `runs` runs through the API while the schedule's faults hit the
 * fleet and the servers, then waits for every run to finish.
 */
export async function runFleetScenario(
  ctx: ScenarioContext,
  options: { runs: number; schedule: FaultSchedule; drainMs: number },
): Promise<FleetScenarioRecord> {
  const { schedule } = options;
  const startedAt = Date.now();
  const sampler = new CheckpointSampler(ctx.db);
  sampler.start(1_000);
  const submitting = submitRuns({
    ...ctx.api,
    scenario: FLEET_SCENARIO,
    count: options.runs,
    spreadMs: Math.round(schedule.windowMs * 0.85),
  });
  const faults: FaultRecord[] = [];
  const injections: Promise<void>[] = [];
  const progress = setInterval(() => {
    void statusCounts(ctx.db, FLEET_SCENARIO).then(
      (counts) =>
        ctx.log(
          `  [${FLEET_SCENARIO} ${Math.round((Date.now() - startedAt) / 1000)}s] ${faults.length} faults, runs ${JSON.stringify(counts)}`,
        ),
      () => undefined,
    );
  }, 10_000);
  // SIGKILLs go one after the other: a kill late for want of a worker to hit must not let the next ones pile onto the same replacement.
  let kills: Promise<unknown> = Promise.resolve();
  for (const fault of schedule.faults) {
    await delay(Math.max(0, startedAt + fault.atMs - Date.now()));
    const injected =
      fault.kind === 'sigkill'
        ? kills.then(() => inject(ctx, fault, startedAt))
        : inject(ctx, fault, startedAt);
    if (fault.kind === 'sigkill') kills = injected.catch(() => undefined);
    injections.push(
      injected.then(
        (record) => void faults.push(record),
        (error: unknown) =>
          void faults.push({
            kind: fault.kind,
            plannedAtMs: fault.atMs,
            atMs: Date.now() - startedAt,
            at: Date.now(),
            detail: {},
            error: String(error),
          }),
      ),
    );
  }
  await Promise.all(injections);
  const submissions = await submitting;
  ctx.log(
    `  faults done; ${submissions.filter((s) => s.runId).length}/${options.runs} runs accepted; draining`,
  );
  const drained = await drain(
    ctx,
    FLEET_SCENARIO,
    submissions.filter((s) => s.runId).length,
    options.drainMs,
  );
  clearInterval(progress);
  await sampler.stop();
  faults.sort((a, b) => a.at - b.at);
  return {
    scenario: FLEET_SCENARIO,
    startedAt,
    durationMs: Date.now() - startedAt,
    schedule,
    faults,
    submissions,
    sampler,
    drained,
  };
}

async function inject(ctx: ScenarioContext, fault: Fault, startedAt: number): Promise<FaultRecord> {
  const at = Date.now();
  const base = { kind: fault.kind, plannedAtMs: fault.atMs, atMs: at - startedAt, at };
  switch (fault.kind) {
    case 'sigkill': {
      const worker = await pick(ctx, fault.pick);
      const waiting = await ctx.waitingJobs().catch(() => null);
      const killedAt = Date.now();
      await ctx.fleet.kill(worker);
      const replacement = ctx.fleet.spawn(worker.slot);
      ctx.log(`  SIGKILL ${worker.id} -> ${replacement.id}`);
      return {
        ...base,
        at: killedAt,
        atMs: killedAt - startedAt,
        workerId: worker.id,
        detail: { replacement: replacement.id, waiting },
      };
    }
    case 'sigstop':
      return { ...base, ...(await zombie(ctx, fault.pick, startedAt)) };
    case 'sigterm': {
      const { worker, held } = await pickHolder(ctx, fault.pick);
      const termAt = Date.now();
      const replacement = ctx.fleet.spawn(worker.slot);
      const exitCode = await ctx.fleet.terminate(worker);
      ctx.log(
        `  SIGTERM ${worker.id} exited ${exitCode} after ${Date.now() - termAt} ms -> ${replacement.id}`,
      );
      return {
        ...base,
        at: termAt,
        atMs: termAt - startedAt,
        workerId: worker.id,
        detail: {
          held: held.length,
          exitCode,
          exitMs: Date.now() - termAt,
          replacement: replacement.id,
        },
      };
    }
    case 'redis-restart': {
      await ctx.services.redis.restart();
      ctx.log(`  Redis restarted (AOF) in ${Date.now() - at} ms`);
      return { ...base, detail: { downMs: Date.now() - at } };
    }
    case 'postgres-restart': {
      await ctx.services.restartPostgres(fault.downMs);
      ctx.log(`  Postgres restarted in ${Date.now() - at} ms`);
      return { ...base, detail: { downMs: Date.now() - at } };
    }
  }
}

/** SIGSTOPs a worker that holds runs, waits until other workers have claimed them, then SIGCONTs it. */
async function zombie(
  ctx: ScenarioContext,
  pickAt: number,
  startedAt: number,
): Promise<Omit<FaultRecord, 'kind' | 'plannedAtMs'>> {
  const { worker, held } = await pickHolder(ctx, pickAt);
  const stoppedAt = Date.now();
  ctx.fleet.freeze(worker, true);
  const deadline = stoppedAt + ctx.lockMs * 2 + 30_000;
  let state = { released: 0, takenOver: 0 };
  do {
    await delay(250);
    state = await releasedAttempts(ctx.db, held).catch(() => state);
  } while (state.released < held.length && Date.now() < deadline);
  if (held.length === 0) await delay(ctx.lockMs * 2);
  const frozenMs = Date.now() - stoppedAt;
  ctx.fleet.freeze(worker, false);
  worker.targeted = false;
  ctx.log(
    `  SIGSTOP ${worker.id} holding ${held.length} runs; ${state.takenOver} taken over; SIGCONT after ${frozenMs} ms`,
  );
  return {
    at: stoppedAt,
    atMs: stoppedAt - startedAt,
    workerId: worker.id,
    detail: { held: held.length, ...state, frozenMs },
  };
}

/** A serving worker that holds runs (any serving worker if none does), with the top-level runs it holds. */
async function pickHolder(
  ctx: ScenarioContext,
  pickAt: number,
): Promise<{ worker: ChaosWorker; held: { run_id: string; epoch: number }[] }> {
  const preferUntil = Date.now() + HOLDER_WAIT_MS;
  for (;;) {
    const candidates = ctx.fleet.serving(MIN_SERVING_MS);
    const holdings = await Promise.all(
      candidates.map((w) => retrying(() => heldRuns(ctx.db, w.id))),
    );
    const holders = candidates.filter((_, i) => holdings[i]!.length > 0);
    const pool = holders.length > 0 ? holders : Date.now() > preferUntil ? candidates : [];
    const free = pool.filter((w) => !w.targeted);
    if (free.length > 0) {
      const worker = free[Math.floor(pickAt * free.length)]!;
      worker.targeted = true;
      return { worker, held: holdings[candidates.indexOf(worker)]! };
    }
    if (Date.now() > preferUntil + PICK_WAIT_MS)
      throw new Error(`no worker serving for ${PICK_WAIT_MS / 1000} s`);
    await delay(250);
  }
}

/** A fault only hits a worker that has served this long, so that every kill interrupts real work. */
const MIN_SERVING_MS = 2_000;
/** How long a SIGSTOP or SIGTERM waits for a worker that holds runs before taking any. */
const HOLDER_WAIT_MS = 10_000;
/** How long a fault waits for a worker to hit before it is recorded as failed. */
const PICK_WAIT_MS = 300_000;

/** The serving worker at `pickAt` (waiting for one to have served {@link MIN_SERVING_MS} if none has). */
async function pick(ctx: ScenarioContext, pickAt: number): Promise<ChaosWorker> {
  for (let waited = 0; ; waited += 100) {
    const serving = ctx.fleet.serving(MIN_SERVING_MS);
    if (serving.length > 0) {
      const worker = serving[Math.floor(pickAt * serving.length)]!;
      worker.targeted = true;
      return worker;
    }
    if (waited > PICK_WAIT_MS) throw new Error(`no worker serving for ${PICK_WAIT_MS / 1000} s`);
    await delay(100);
  }
}
