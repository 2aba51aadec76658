import type { z } from 'zod';
import { IDEMPOTENCY_KEY_HEADER, MAX_IDEMPOTENCY_KEY_LENGTH } from '../idempotency-key.js';
import {
  cancelRunBodySchema,
  continueRunBodySchema,
  createRunBodySchema,
  decisionsBodySchema,
  forkRunBodySchema,
  resumeRunBodySchema,
  suspendRunBodySchema,
} from '../request-schemas.js';
import {
  cancelledRunSchema,
  continuedRunSchema,
  createdRunSchema,
  decisionsResultSchema,
  forkedRunSchema,
  resumedRunSchema,
  runViewSchema,
  sessionViewSchema,
  suspendedRunSchema,
} from './answer-schemas.js';

/** A parameter of an operation, outside its body. */
export interface ApiParameter {
  name: string;
  in: 'path' | 'query' | 'header';
  description: string;
  required?: boolean;
  /** A plain JSON Schema (strings, bounded). */
  schema: Record<string, unknown>;
}

/** One answer of an operation: a JSON schema, an SSE stream or nothing. */
export type ApiAnswer =
  | { description: string; json: z.ZodType }
  | { description: string; eventStream: true }
  | { description: string; empty: true };

/** One `/v1` operation, as the OpenAPI document describes it. */
export interface ApiOperation {
  method: 'get' | 'post' | 'patch' | 'delete';
  /** In OpenAPI's form: `/v1/runs/{run_id}`. */
  path: string;
  operationId: string;
  tag: 'runs' | 'sessions' | 'schedules' | 'webhooks';
  summary: string;
  description?: string;
  parameters?: readonly ApiParameter[];
  /** The zod schema the route validates its JSON body with (an empty body counts as `{}`). */
  body?: { schema: z.ZodType; required: boolean };
  /** Successful answers by status. */
  answers: Readonly<Record<number, ApiAnswer>>;
  /** Error answers by status (each in the API's error shape), beyond {@link COMMON_ERRORS}. */
  errors: Readonly<Record<number, string>>;
}

/** Errors any `/v1` operation may answer. */
export const COMMON_ERRORS: Readonly<Record<number, string>> = {
  401: 'unauthorized: API keys are on and the request has no valid bearer key',
  403: 'forbidden: a read-only key writing, a page write without its CSRF token, or an admin-only resource',
  500: 'internal_error: nothing more is said',
  503: 'service_unavailable: Postgres is unavailable; nothing was done, retry after Retry-After',
};

/** Errors of an operation that reads a JSON body. */
const BODY_ERRORS: Readonly<Record<number, string>> = {
  400: 'invalid_body (with issues naming each field), invalid_json, or invalid_parameter',
  413: 'payload_too_large: the body is over the limit (default 1 MiB)',
  415: 'unsupported_media_type: a non-empty body that is not application/json',
};

const runId: ApiParameter = {
  name: 'run_id',
  in: 'path',
  required: true,
  description: "The run's id; another tenant's run is a 404",
  schema: { type: 'string' },
};

const sessionId: ApiParameter = {
  name: 'session_id',
  in: 'path',
  required: true,
  description: "The session's id, within the key's tenant",
  schema: { type: 'string' },
};

const idempotencyKey: ApiParameter = {
  name: IDEMPOTENCY_KEY_HEADER,
  in: 'header',
  description:
    'The same key with the same body answers the run it created (200, nothing enqueued again); with another body, 422',
  schema: { type: 'string', minLength: 1, maxLength: MAX_IDEMPOTENCY_KEY_LENGTH },
};

const createRun = (kind: 'agent' | 'team'): ApiOperation => ({
  method: 'post',
  path: `/v1/${kind}s/{name}/runs`,
  operationId: kind === 'agent' ? 'createAgentRun' : 'createTeamRun',
  tag: 'runs',
  summary: `Start a run of ${kind === 'agent' ? 'an agent' : 'a team'}`,
  description: 'Creates the run (PENDING) and enqueues it.',
  parameters: [
    {
      name: 'name',
      in: 'path',
      required: true,
      description: `The ${kind}'s name, as the workers' registry knows it`,
      schema: { type: 'string' },
    },
    idempotencyKey,
  ],
  body: { schema: createRunBodySchema, required: true },
  answers: {
    200: { description: 'The run this Idempotency-Key created before', json: createdRunSchema },
    202: { description: 'Created and enqueued', json: createdRunSchema },
  },
  errors: {
    ...BODY_ERRORS,
    404: `entity_not_found: no ${kind} of that name`,
    422: 'field_too_long, or idempotency_key_reused (the key came with another body)',
    429: "too_many_runs (the session is full), or budget_exhausted (the tenant's day is spent; with budget and Retry-After)",
  },
});

/** Every `/v1` route of the producer: what `/openapi.json` describes (a test checks the app registers exactly these). */
export const API_OPERATIONS: readonly ApiOperation[] = [
  createRun('agent'),
  createRun('team'),
  {
    method: 'get',
    path: '/v1/runs/{run_id}',
    operationId: 'getRun',
    tag: 'runs',
    summary: 'Read a run',
    description:
      'Status, content, messages, tools, member runs, attempts, pending actions, usage, checkpoints and forks.',
    parameters: [runId],
    answers: { 200: { description: 'The run', json: runViewSchema } },
    errors: { 404: 'run_not_found' },
  },
  {
    method: 'post',
    path: '/v1/runs/{run_id}/continue',
    operationId: 'continueRun',
    tag: 'runs',
    summary: 'Continue a run',
    description:
      'Resumes the run (with a new user message, a new deadline, or on the current definition), or forks a COMPLETED one.',
    parameters: [runId],
    body: { schema: continueRunBodySchema, required: false },
    answers: {
      202: { description: 'Resumed, forked or already queued', json: continuedRunSchema },
    },
    errors: {
      ...BODY_ERRORS,
      404: 'run_not_found',
      409: 'run_not_continuable (its status does not allow it), or continue_pending',
      422: 'field_too_long',
      429: "too_many_runs: a fork would pass its session's limit",
    },
  },
  {
    method: 'post',
    path: '/v1/runs/{run_id}/fork',
    operationId: 'forkRun',
    tag: 'runs',
    summary: 'Fork a run',
    description: 'A new run from a checkpoint of this one (the last by default).',
    parameters: [runId, idempotencyKey],
    body: { schema: forkRunBodySchema, required: false },
    answers: {
      200: { description: 'The fork this Idempotency-Key created before', json: forkedRunSchema },
      201: { description: 'The fork, created and enqueued', json: forkedRunSchema },
    },
    errors: {
      ...BODY_ERRORS,
      404: 'run_not_found',
      422: 'invalid_fork_point, field_too_long or idempotency_key_reused',
      429: 'too_many_runs: the session is full',
    },
  },
  {
    method: 'post',
    path: '/v1/runs/{run_id}/cancel',
    operationId: 'cancelRun',
    tag: 'runs',
    summary: 'Cancel a run',
    description: 'Asks the run (and its member runs) to stop; it ends CANCELLED.',
    parameters: [runId],
    body: { schema: cancelRunBodySchema, required: false },
    answers: { 202: { description: 'Cancel requested', json: cancelledRunSchema } },
    errors: { ...BODY_ERRORS, 404: 'run_not_found', 409: 'run_already_terminal' },
  },
  {
    method: 'post',
    path: '/v1/runs/{run_id}/suspend',
    operationId: 'suspendRun',
    tag: 'runs',
    summary: 'Suspend a run',
    description:
      'A running run stops at its next checkpoint boundary (with `now: true`, its calls in flight are aborted and run again on resume) and waits PAUSED with a `suspended` action; a queued or paused run is suspended at once. A member run suspends its team.',
    parameters: [runId],
    body: { schema: suspendRunBodySchema, required: false },
    answers: { 202: { description: 'Suspended, or requested', json: suspendedRunSchema } },
    errors: { ...BODY_ERRORS, 404: 'run_not_found', 409: 'run_already_terminal' },
  },
  {
    method: 'post',
    path: '/v1/runs/{run_id}/resume',
    operationId: 'resumeRun',
    tag: 'runs',
    summary: 'Resume a suspended run',
    description:
      "Approves the `suspended` action of the run's tree and enqueues the run again, on the definition the fleet serves; a second resume is a no-op.",
    parameters: [runId],
    body: { schema: resumeRunBodySchema, required: false },
    answers: { 200: { description: 'Resumed, or resumed before', json: resumedRunSchema } },
    errors: {
      ...BODY_ERRORS,
      404: 'run_not_found',
      409: 'run_not_continuable: the run was never suspended (or was cancelled while suspended)',
    },
  },
  {
    method: 'post',
    path: '/v1/runs/{run_id}/decisions',
    operationId: 'decideRun',
    tag: 'runs',
    summary: "Decide a run's pending actions",
    description:
      'Approve, edit or reject a gated tool call, or supply its result (human in the loop).',
    parameters: [runId],
    body: { schema: decisionsBodySchema, required: true },
    answers: { 200: { description: 'What was applied', json: decisionsResultSchema } },
    errors: {
      ...BODY_ERRORS,
      403: 'forbidden: the key may not decide this action',
      404: 'run_not_found or action_not_found',
      409: 'decision_conflict: the action was decided otherwise',
      410: 'action_expired',
      412: 'args_digest_mismatch: the call changed since its args_digest was read',
      422: 'invalid_decision',
    },
  },
  {
    method: 'get',
    path: '/v1/runs/{run_id}/events',
    operationId: 'runEvents',
    tag: 'runs',
    summary: "Follow a run's events (SSE)",
    description:
      "Replays the run's and its member runs' events after the cursor, then follows new ones until the run is terminal. " +
      "Each stored event's SSE id is the stream's cursor after it; a member run's event carries run_id, member_path and member_seq in its data.",
    parameters: [
      runId,
      {
        name: 'after',
        in: 'query',
        description: 'Start after this cursor (an event id of this stream); 0 by default',
        schema: { type: 'string' },
      },
      {
        name: 'Last-Event-ID',
        in: 'header',
        description: 'As after, sent by a reconnecting EventSource; wins over after',
        schema: { type: 'string' },
      },
      {
        name: 'include',
        in: 'query',
        description:
          'deltas: also the live-only events (ModelDelta, AttemptAbandoned), without an id',
        schema: { type: 'string', enum: ['deltas'] },
      },
    ],
    answers: { 200: { description: 'A text/event-stream of run events', eventStream: true } },
    errors: {
      400: 'invalid_parameter: a bad cursor or include',
      404: 'run_not_found',
      429: 'too_many_streams: the key holds its most streams (with Retry-After)',
    },
  },
  {
    method: 'get',
    path: '/v1/sessions/{session_id}',
    operationId: 'getSession',
    tag: 'sessions',
    summary: 'Read a session and its runs',
    parameters: [sessionId],
    answers: { 200: { description: 'The session', json: sessionViewSchema } },
    errors: { 404: 'not_found: no such session for this tenant' },
  },
  {
    method: 'delete',
    path: '/v1/sessions/{session_id}',
    operationId: 'deleteSession',
    tag: 'sessions',
    summary: 'Delete a session',
    description: 'Deletes the session and every run, message, tool call, attempt and event in it.',
    parameters: [sessionId],
    answers: { 204: { description: 'Deleted', empty: true } },
    errors: {
      404: 'not_found: no such session for this tenant',
      409: 'session_has_live_runs or session_has_forks',
    },
  },
];
