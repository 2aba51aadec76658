import type { Job } from 'bullmq';
import type {
  ContinueRequest,
  CreatedRun,
  CreateRunRequest,
  DecisionsResult,
  Engine,
  ForkedFrom,
  ForkRequest,
  PostedDecision,
  RunRecord,
} from '@cairn/engine';
import {
  cancelRun,
  continueIntents,
  createdRunIntents,
  decideAndResume,
  recoveryIntents,
  resumeRun,
  suspendRun,
  type CapacityPark,
  type ContinueDecision,
  type IntentResult,
  type JobIntent,
  type JobPort,
  type RecoveryOptions,
  type RecoveryPlan,
  type ResumeOutcome,
  type SuspendOutcome,
} from '@cairn/engine/lifecycle';
import type { CancelStore, DecisionStore, RecoveryStore, SuspendStore } from '@cairn/engine/store';
import { jobPortOf } from './carry-out-intents.js';
import type { JobData } from './job-catalog.js';
import type { RunQueue } from './queue-backend.js';

/**
 * What a {@link RunEngine} runs on, by side: the run queue always, each other
 * part only for the moves that use it. The producer gives every part; the
 * worker's processor (whose engine runs in its execution threads) the run
 * queue alone; the reconciler the run queue and `recovery`.
 */
export interface RunEngineDeps {
  runQueue: RunQueue;
  /** For create, continue, fork and decide: the engine's rules (the catalog, the continue rules, the decisions' validation). */
  engine?: Engine;
  /** For decide, suspend and resume: the store's decision and suspend primitives (its `hitl` part). */
  hitl?: DecisionStore & SuspendStore;
  /** For suspend: makes a new pending action's id (a suspension's). */
  newActionId?(): string;
  /** For cancel: the store's cancel primitives (its `writes` part). */
  cancels?: CancelStore;
  /** For cancel: how long it waits for the worker holding a running run before it cancels the run itself. */
  cancelGraceMs?: number;
  /** For recover: the store's recovery reads and moves (its `ops` part). */
  recovery?: RecoveryStore;
}

/** A RunEngine's deps with the parts `K` given: what a move that uses them asks of its engine. */
type Having<K extends keyof RunEngineDeps> = RunEngineDeps & Required<Pick<RunEngineDeps, K>>;

/** A job a worker holds, with its lock's token (BullMQ refuses a move of it without the token). */
interface HeldJob {
  job: Job;
  token: string | undefined;
}

/** What a park records on its job: when the run's wait began, and its model and waiter in line. */
type ParkMarks = Pick<JobData<'run'>, 'waitingSince' | 'parkedFor'>;

/**
 * The fleet's moves of a run, each one call: decided by the lifecycle
 * (`@cairn/engine`'s `lifecycle/`), then its job intents carried out on the
 * run queue, here and nowhere else (a lint rule holds it). The producer's
 * API, its MCP tools and its pages make every move from outside an
 * execution through it; the worker's processor carries out through it what
 * an execution's moves ask of the queue (their intents, a park for model
 * capacity, a hand-back), the capacity line its `wake`, and the reconciler
 * its `recover`. A held or delayed run job is moved here only (a lint rule).
 * The moves an execution makes on the run itself (claim, checkpoint, pause,
 * finish) are its engine's, in its execution thread.
 *
 * Each move asks only for the parts of {@link RunEngineDeps} it uses (its
 * `this` type says which): `new RunEngine({ runQueue })` has the worker's
 * moves, and calling `createRun` on it does not compile.
 *
 * @typeParam D - the parts this engine was given; by default every part (the producer's).
 */
export class RunEngine<D extends RunEngineDeps = Required<RunEngineDeps>> {
  private readonly jobs: JobPort;

  constructor(private readonly deps: D) {
    this.jobs = jobPortOf(deps.runQueue);
  }

  /** `create`: the run (PENDING) and its `run` job; a replayed idempotency key enqueues nothing new. */
  async createRun(
    this: RunEngine<Having<'engine'>>,
    request: CreateRunRequest,
  ): Promise<CreatedRun> {
    const run = await this.deps.engine.createRun(request);
    await this.jobs.carryOut(createdRunIntents(run));
    return run;
  }

  /** `continue`: the continue rules, then a `continue` job (a resume in place) or the fork's `run` job. */
  async continueRun(
    this: RunEngine<Having<'engine'>>,
    runId: string,
    request: ContinueRequest = {},
  ): Promise<ContinueDecision> {
    const decision = await this.deps.engine.continueRun(runId, request);
    await this.jobs.carryOut(continueIntents(decision));
    return decision;
  }

  /** `fork`: a new run from a checkpoint of `runId`, and its `run` job. */
  async forkRun(
    this: RunEngine<Having<'engine'>>,
    runId: string,
    request: ForkRequest = {},
  ): Promise<CreatedRun & { forkedFrom: ForkedFrom }> {
    const fork = await this.deps.engine.forkRun(runId, request);
    await this.jobs.carryOut(createdRunIntents(fork));
    return fork;
  }

  /** `decide`: the decisions `decider`'s key posts, all or nothing, and the root's resume once its tree's last action is decided. */
  async decide(
    this: RunEngine<Having<'engine' | 'hitl'>>,
    runId: string,
    decisions: readonly PostedDecision[],
    decider: { tenantId: string | null },
  ): Promise<DecisionsResult> {
    const validate = await this.deps.engine.decisionValidator(runId, decisions, decider);
    const { result, intents } = await decideAndResume(this.deps.hitl, runId, decisions, validate);
    await this.jobs.carryOut(intents);
    return result;
  }

  /** `cancel`: at once for a run no worker executes, else by its worker or, past the grace, here. */
  cancelRun(
    this: RunEngine<Having<'cancels' | 'cancelGraceMs'>>,
    runId: string,
  ): Promise<RunRecord> {
    return cancelRun(
      { store: this.deps.cancels, jobs: this.jobs, graceMs: this.deps.cancelGraceMs },
      runId,
    );
  }

  /** `suspend`: a queued or paused run at once, a running one at its next checkpoint boundary. */
  suspendRun(
    this: RunEngine<Having<'hitl' | 'newActionId'>>,
    runId: string,
    options: { now?: boolean } = {},
  ): Promise<SuspendOutcome> {
    return suspendRun(this.suspendDeps(), runId, options);
  }

  /** `resume` of a suspended run: its `suspended` action approved and the resume enqueued. */
  resumeRun(
    this: RunEngine<Having<'hitl' | 'newActionId'>>,
    runId: string,
  ): Promise<ResumeOutcome> {
    return resumeRun(this.suspendDeps(), runId);
  }

  /**
   * `recover`: one scan of the lifecycle's `recoveryIntents` (the runs past
   * their deadline it ends, the runs that need a job, the overdue actions it
   * expires), its intents carried out; with each intent's result, in order.
   */
  async recover(
    this: RunEngine<Having<'recovery'>>,
    options: RecoveryOptions,
  ): Promise<{ plan: RecoveryPlan; results: IntentResult[] }> {
    const plan = await recoveryIntents(this.deps.recovery, options);
    return { plan, results: await this.jobs.carryOut(plan.intents) };
  }

  /**
   * After an execution: the job intents of the moves it made in its thread
   * (the `expire` jobs of a pause, the resume an expiry decided), carried out.
   */
  async afterExecution(intents: readonly JobIntent[] = []): Promise<void> {
    await this.jobs.carryOut(intents);
  }

  /**
   * `park` for model capacity, after an execution parked the run (RUNNING at
   * its checkpoint): its held job delayed until the limit expects room,
   * marked so that its next pickup claims with reason `capacity`, keeping
   * when its wait began (its age among the limit's waiters).
   */
  park(held: HeldJob, park: CapacityPark, now = Date.now()): Promise<void> {
    return this.delayHeld(held, park.retryAfterMs, now, {
      waitingSince: Math.round(now - park.waitedMs),
      parkedFor: { model: park.model, waiter: park.waiter },
    });
  }

  /**
   * A pickup back from a park (or a run's first) delayed again before its
   * claim: the run is untouched, and the mark moves to this pickup so that
   * the next one claims with reason `capacity` (a never-claimed run's with
   * reason `run`); `marks` start a first pickup's wait.
   */
  parkAgain(held: HeldJob, delayMs: number, marks: ParkMarks = {}): Promise<void> {
    return this.delayHeld(held, delayMs, Date.now(), marks);
  }

  /**
   * `hand back` a held job for another worker (this one is closing): back to waiting, unclaimed
   * or at the checkpoint its execution handed over at. A `claimed` job is marked with its attempt
   * so that its next pickup claims with reason `handover`.
   */
  async handBack({ job, token }: HeldJob, claimed: boolean): Promise<void> {
    if (claimed)
      await job.updateData({ ...(job.data as object), handoverAttempt: job.attemptsStarted });
    await job.moveToWait(token);
  }

  /**
   * `wake` a run parked for model capacity that the limiter lets in now: its tree's job, while
   * delayed, promoted so that its pickup asks for a permit now rather than when its park's delay
   * ends. A job back already (it asks in its place) or gone (its run moved on) is left alone.
   */
  async wake(live: { job: Job; state: string } | undefined): Promise<void> {
    if (live?.state === 'delayed') await live.job.promote().catch(() => undefined);
  }

  private async delayHeld(
    { job, token }: HeldJob,
    delayMs: number,
    now: number,
    marks: ParkMarks,
  ): Promise<void> {
    await job.updateData({
      ...(job.data as object),
      ...marks,
      parkedAttempt: job.attemptsStarted,
    });
    await job.moveToDelayed(now + delayMs, token);
  }

  private suspendDeps(this: RunEngine<Having<'hitl' | 'newActionId'>>) {
    return { store: this.deps.hitl, jobs: this.jobs, newActionId: this.deps.newActionId };
  }
}
