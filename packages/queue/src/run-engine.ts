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
  resumeRun,
  suspendRun,
  type ContinueDecision,
  type JobPort,
  type ResumeOutcome,
  type SuspendOutcome,
} from '@cairn/engine/lifecycle';
import type { CancelStore, DecisionStore, SuspendStore } from '@cairn/engine/store';
import { jobPortOf } from './carry-out-intents.js';
import type { RunQueue } from './queue-backend.js';

/** What a {@link RunEngine} runs on. */
export interface RunEngineDeps {
  /** Decides create, continue and fork, and validates decisions (the lifecycle's moves). */
  engine: Engine;
  /** The store's decision and suspend primitives (its `hitl` part). */
  hitl: DecisionStore & SuspendStore;
  /** The store's cancel primitives (its `writes` part). */
  cancels: CancelStore;
  runQueue: RunQueue;
  /** How long a cancel waits for the worker holding a running run before it cancels the run itself. */
  cancelGraceMs: number;
  /** Makes a new pending action's id (a suspension's). */
  newActionId(): string;
}

/**
 * The fleet's moves of a run from outside an execution, each one call:
 * decided by the lifecycle (`@cairn/engine`'s `lifecycle/`), then its job
 * intents carried out on the run queue, here and nowhere else. The
 * producer's API, its MCP tools and its pages make every such move through
 * it; the worker's processor and the reconciler carry out the intents of
 * the moves they make (a pickup, a recovery) on the same queue.
 */
export class RunEngine {
  private readonly jobs: JobPort;

  constructor(private readonly deps: RunEngineDeps) {
    this.jobs = jobPortOf(deps.runQueue);
  }

  /** `create`: the run (PENDING) and its `run` job; a replayed idempotency key enqueues nothing new. */
  async createRun(request: CreateRunRequest): Promise<CreatedRun> {
    const run = await this.deps.engine.createRun(request);
    await this.jobs.carryOut(createdRunIntents(run));
    return run;
  }

  /** `continue`: the continue rules, then a `continue` job (a resume in place) or the fork's `run` job. */
  async continueRun(runId: string, request: ContinueRequest = {}): Promise<ContinueDecision> {
    const decision = await this.deps.engine.continueRun(runId, request);
    await this.jobs.carryOut(continueIntents(decision));
    return decision;
  }

  /** `fork`: a new run from a checkpoint of `runId`, and its `run` job. */
  async forkRun(
    runId: string,
    request: ForkRequest = {},
  ): Promise<CreatedRun & { forkedFrom: ForkedFrom }> {
    const fork = await this.deps.engine.forkRun(runId, request);
    await this.jobs.carryOut(createdRunIntents(fork));
    return fork;
  }

  /** `decide`: the decisions `decider`'s key posts, all or nothing, and the root's resume once its tree's last action is decided. */
  async decide(
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
  cancelRun(runId: string): Promise<RunRecord> {
    return cancelRun(
      { store: this.deps.cancels, jobs: this.jobs, graceMs: this.deps.cancelGraceMs },
      runId,
    );
  }

  /** `suspend`: a queued or paused run at once, a running one at its next checkpoint boundary. */
  suspendRun(runId: string, options: { now?: boolean } = {}): Promise<SuspendOutcome> {
    return suspendRun(this.suspendDeps(), runId, options);
  }

  /** `resume` of a suspended run: its `suspended` action approved and the resume enqueued. */
  resumeRun(runId: string): Promise<ResumeOutcome> {
    return resumeRun(this.suspendDeps(), runId);
  }

  private suspendDeps() {
    return { store: this.deps.hitl, jobs: this.jobs, newActionId: this.deps.newActionId };
  }
}
