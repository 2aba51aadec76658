import { WaitTimeout } from './errors.js';
import {
  HttpTransport,
  segment,
  type ClientOptions,
  type RequestOptions,
} from './http-transport.js';
import { followRunEvents, type RunEventsOptions } from './run-events.js';
import { webhooksApi, type WebhooksApi } from './webhooks-api.js';
import { schedulesApi, type SchedulesApi } from './schedules-api.js';
import type {
  BudgetParams,
  CancelledRun,
  CheckpointMode,
  ContinuedRun,
  ContinueRunBody,
  CreatedRun,
  Decision,
  DecisionsResult,
  EntityRef,
  ForkedRun,
  ForkRunBody,
  ResumedRun,
  RunStreamEvent,
  RunView,
  SuspendedRun,
} from './types.js';

/** What `runs.create` sends: the entity, then the body of `POST /v1/{agents,teams}/:name/runs`. */
export interface CreateRunParams extends EntityRef {
  input: string;
  session_id?: string;
  user_id?: string;
  checkpoint?: CheckpointMode;
  metadata?: Record<string, unknown>;
  /** 1 (highest) to 10: orders the tenant's runs waiting for a model's permits. @defaultValue 5 */
  priority?: number;
  /**
   * The run must end within this many ms of its creation (at most 365 days), else it ends in ERROR
   * (`DeadlineExceededError`). @defaultValue the entity's `maxDurationMs`, else none
   */
  deadline_ms?: number;
  /**
   * What the run's tree may spend; past it the run pauses with a `budget` action for a person.
   * @defaultValue the entity's `budget`, else none
   */
  budget?: BudgetParams;
}

/** Options of `runs.create`. */
export interface CreateRunOptions extends RequestOptions {
  /** Sent as `Idempotency-Key`: the same key with the same body returns the run it created. */
  idempotencyKey?: string;
}

/** Options of `runs.wait`. */
export interface WaitOptions {
  /** Give up with {@link WaitTimeout} after this many ms. */
  timeoutMs: number;
  signal?: AbortSignal;
}

/** The runs API. */
export interface RunsApi {
  /** Creates a run (PENDING) and enqueues it. */
  create(params: CreateRunParams, options?: CreateRunOptions): Promise<CreatedRun>;
  /** The run with its messages, tool calls, member runs and attempts; throws `RunNotFound`. */
  get(runId: string, options?: RequestOptions): Promise<RunView>;
  /** Resumes (RUNNING, ERROR) or forks (COMPLETED with `fork: true`) a run; other statuses throw `Conflict`. */
  continue(runId: string, body?: ContinueRunBody, options?: RequestOptions): Promise<ContinuedRun>;
  /**
   * Forks a run at a checkpoint (default: its last): a new run whose history is the source's up to
   * there, then `input`; the source is untouched. Throws `RunNotFound`, `Conflict` (a PENDING run),
   * or `ApiError` 422 for a point the run does not have.
   */
  fork(runId: string, body?: ForkRunBody, options?: CreateRunOptions): Promise<ForkedRun>;
  /** Asks for the run to be cancelled; throws `Conflict` when it already finished. */
  cancel(runId: string, options?: RequestOptions): Promise<CancelledRun>;
  /**
   * Suspends a run: a running one stops at its next checkpoint boundary (with `now: true`, its calls
   * in flight are aborted and run again on resume) and waits PAUSED with a `suspended` action; a
   * queued or paused one at once. Throws `Conflict` when it already finished.
   */
  suspend(runId: string, body?: { now?: boolean }, options?: RequestOptions): Promise<SuspendedRun>;
  /** Resumes a suspended run (a second resume is a no-op); throws `Conflict` for a run never suspended or finished. */
  resume(runId: string, options?: RequestOptions): Promise<ResumedRun>;
  /** Decides pending actions of a PAUSED run (human in the loop). */
  decide(
    runId: string,
    decisions: readonly Decision[],
    options?: RequestOptions,
  ): Promise<DecisionsResult>;
  /**
   * Resolves with the run once it finished (COMPLETED, ERROR, CANCELLED) or
   * is PAUSED with an action waiting for a decision; follows its event stream
   * meanwhile. A PAUSED run whose actions are all decided resumes by itself:
   * the wait goes on.
   */
  wait(runId: string, options: WaitOptions): Promise<RunView>;
  /** The run's events as they happen, reconnecting by itself (see {@link RunEventsOptions}). */
  events(
    runId: string,
    options?: RunEventsOptions,
  ): AsyncGenerator<RunStreamEvent, void, undefined>;
}

/** A client of one Cairn producer. */
export interface CairnClient {
  runs: RunsApi;
  /** Webhook endpoints: signed notifications of runs that pause or end, and their delivery attempts. */
  webhooks: WebhooksApi;
  /** Schedules: runs started on a cron pattern or an interval. */
  schedules: SchedulesApi;
}

/**
 * A typed client of the producer's HTTP API, for apps in other services and
 * browsers: it needs only `fetch`, no database, Redis or agent code.
 *
 * @example
 * ```ts
 * const cairn = createClient({ baseUrl: 'http://localhost:3000', apiKey: process.env.CAIRN_API_KEY });
 * const { run_id } = await cairn.runs.create({ kind: 'team', name: 'research-team', input: 'Research cairns' });
 * for await (const event of cairn.runs.events(run_id)) console.log(event.seq, event.type);
 * const run = await cairn.runs.wait(run_id, { timeoutMs: 60_000 });
 * ```
 */
export function createClient(options: ClientOptions): CairnClient {
  const http = new HttpTransport(options);
  const runs: RunsApi = {
    create: ({ kind, name, ...body }, options = {}) =>
      http.json(
        'POST',
        `/v1/${kind === 'team' ? 'teams' : 'agents'}/${segment(name)}/runs`,
        body,
        withIdempotencyKey(options),
      ),
    get: (runId, request) => http.json('GET', `/v1/runs/${segment(runId)}`, undefined, request),
    continue: (runId, body = {}, request) =>
      http.json('POST', `/v1/runs/${segment(runId)}/continue`, body, request),
    fork: (runId, body = {}, options = {}) =>
      http.json('POST', `/v1/runs/${segment(runId)}/fork`, body, withIdempotencyKey(options)),
    cancel: (runId, request) => http.json('POST', `/v1/runs/${segment(runId)}/cancel`, {}, request),
    suspend: (runId, body = {}, request) =>
      http.json('POST', `/v1/runs/${segment(runId)}/suspend`, body, request),
    resume: (runId, request) => http.json('POST', `/v1/runs/${segment(runId)}/resume`, {}, request),
    decide: (runId, decisions, request) =>
      http.json('POST', `/v1/runs/${segment(runId)}/decisions`, { decisions }, request),
    events: (runId, eventOptions) => followRunEvents(http, runId, eventOptions),
    wait: (runId, waitOptions) => waitForRun(runs, runId, waitOptions),
  };
  return { runs, schedules: schedulesApi(http), webhooks: webhooksApi(http) };
}

/** The request's options with its idempotency key sent as the `Idempotency-Key` header. */
function withIdempotencyKey({ idempotencyKey, ...request }: CreateRunOptions): RequestOptions {
  return idempotencyKey
    ? { ...request, headers: { ...request.headers, 'Idempotency-Key': idempotencyKey } }
    : request;
}

/** PAUSED with an action still to decide (one whose actions are all decided is about to resume). */
function awaitsDecision(run: RunView): boolean {
  return (
    run.status === 'PAUSED' && run.pending_actions.some((action) => action.status === 'pending')
  );
}

async function waitForRun(
  runs: RunsApi,
  runId: string,
  { timeoutMs, signal }: WaitOptions,
): Promise<RunView> {
  const timeout = AbortSignal.timeout(timeoutMs);
  const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
  try {
    await runs.get(runId, { signal: combined });
    for await (const event of runs.events(runId, { signal: combined })) {
      // A replayed RunPaused may be long past: only a run still waiting for a decision ends the wait.
      if (event.type !== 'RunPaused') continue;
      const current = await runs.get(runId, { signal: combined });
      if (awaitsDecision(current)) return current;
    }
    combined.throwIfAborted();
    return await runs.get(runId, { signal: combined });
  } catch (error) {
    if (timeout.aborted && !signal?.aborted) throw new WaitTimeout(runId, timeoutMs);
    throw error;
  }
}
