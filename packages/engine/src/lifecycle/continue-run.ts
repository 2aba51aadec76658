import type { EngineResources } from '../engine-resources.js';
import { assertDeadlineMs } from '../deadline-ms.js';
import { assertWithinCaps } from '../entity-caps.js';
import { ContinuePendingError } from '../errors.js';
import {
  CONTINUE_IN_PLACE_STATUSES,
  decideContinue,
  type ContinueDecision,
} from './continue-rules.js';
import { forkRun } from './fork-run.js';
import { EXECUTING_STATUS } from './run-status.js';
import type { RunRecord } from '../run-types.js';

/** What `continueRun` takes. */
export interface ContinueRequest {
  /** For a COMPLETED run: start a new run from its messages. */
  fork?: boolean;
  /** A new user message (required to fork). */
  input?: string;
  /**
   * For a RUNNING or ERROR run: resume it on the worker's definition of its entity even when it
   * differs from the run's `definitionHash` (a run that ended in `DefinitionChangedError`).
   */
  upgrade?: boolean;
  /**
   * A new deadline: the run must end within this many ms of the continue (a fork: of its creation).
   * Required to resume a run whose deadline has passed; not above its entity's `caps.maxDurationMs`
   * (`CapExceededError`). @defaultValue the run's deadline stays (a fork: its entity's `maxDurationMs`)
   */
  deadlineMs?: number;
}

/**
 * Applies the continue rules ({@link decideContinue}) to a run: a resume in
 * place stores the continue with its input (and its new deadline) in the statement that checks the
 * status (the first execution that commits applies it, once), and applies the
 * rules again when the status moved between the read and that write; a fork
 * creates the new run ({@link forkRun}). Throws `ContinuePendingError` when
 * another continue's input still waits.
 */
export async function continueRun(
  resources: EngineResources,
  runId: string,
  request: ContinueRequest = {},
): Promise<ContinueDecision> {
  assertDeadlineMs('deadlineMs', request.deadlineMs);
  for (;;) {
    const run = await resources.store.getRun(runId);
    const decision = decideContinue(runId, run, request, resources.clock.now());
    // `continue { fork: true }`: a fork at the last checkpoint.
    if (decision.action === 'fork')
      return {
        action: 'fork',
        run: await forkRun(resources, runId, {
          ...(request.input !== undefined && { input: request.input }),
          ...(request.deadlineMs !== undefined && { deadlineMs: request.deadlineMs }),
        }),
      };
    if (decision.action !== 'resume') return decision;
    if (request.deadlineMs !== undefined)
      await assertDeadlineWithinCap(resources, decision.run, request.deadlineMs);
    const resumed = movesDeadlineOnly(request, decision.run)
      ? await moveRunningDeadline(resources, runId, request.deadlineMs!)
      : await recordContinue(resources, runId, request);
    if (resumed) return resumed;
  }
}

/** Throws `CapExceededError` when `deadlineMs` is above the `caps.maxDurationMs` its run's entity has now. */
async function assertDeadlineWithinCap(
  { catalog }: EngineResources,
  run: RunRecord,
  deadlineMs: number,
): Promise<void> {
  const entity = await catalog.describe(run.entity);
  if (entity) assertWithinCaps(entity, { deadlineMs });
}

/**
 * A continue that only gives a RUNNING run a new deadline: the execution holding it follows the
 * new deadline (its lease watch reads it), with no continue request to take in, so no turn is
 * added; a run no worker holds is resumed by the continue's job as any other.
 */
function movesDeadlineOnly(request: ContinueRequest, run: RunRecord): boolean {
  return (
    request.deadlineMs !== undefined &&
    !request.input?.trim() &&
    request.upgrade !== true &&
    run.status === EXECUTING_STATUS
  );
}

/** Moves a RUNNING run's deadline; undefined when it is no longer RUNNING (the rules are applied again). */
async function moveRunningDeadline(
  resources: EngineResources,
  runId: string,
  deadlineMs: number,
): Promise<ContinueDecision | undefined> {
  const { store } = resources;
  if (!(await store.moveDeadline(runId, { deadlineMs, statuses: [EXECUTING_STATUS] })))
    return undefined;
  const run = await store.getRun(runId);
  return run && { action: 'resume', run };
}

/** Stores a resume-in-place continue; undefined when the run left the statuses a continue resumes from. */
async function recordContinue(
  resources: EngineResources,
  runId: string,
  request: ContinueRequest,
): Promise<ContinueDecision | undefined> {
  const { store } = resources;
  const input = request.input?.trim() ? request.input : null;
  const recorded = await store.recordContinueRequest(runId, {
    input,
    upgrade: request.upgrade === true,
    statuses: CONTINUE_IN_PLACE_STATUSES,
    ...(request.deadlineMs !== undefined && { deadlineMs: request.deadlineMs }),
  });
  const run = await store.getRun(runId);
  if (recorded.recorded) return { action: 'resume', run: run! };
  if (recorded.reason === 'waiting') {
    if (input !== null) throw new ContinuePendingError(runId);
    // A continue without input while another waits: that one's job resumes the run.
    return { action: 'resume', run: run! };
  }
  return undefined;
}
