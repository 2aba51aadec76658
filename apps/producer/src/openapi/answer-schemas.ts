import { CHECKPOINT_MODES, RUN_STATUSES } from '@cairn/engine';
import { z } from 'zod';

/**
 * The API's answers as zod schemas, for the OpenAPI document only: the routes
 * answer the store's views. `answer-schemas.test.ts` checks at compile time
 * that each inferred type equals `@cairn/client`'s wire type of the same name
 * (or the store's, where the client has none), so the two cannot drift.
 */

const runStatus = z.enum(RUN_STATUSES);
const checkpointMode = z.enum(CHECKPOINT_MODES);
const timestamp = z.string().describe('ISO 8601');
const optionalTimestamp = timestamp.nullable();

const entityRef = z.object({ kind: z.enum(['agent', 'team']), name: z.string() });

const toolCallRequest = z.object({
  id: z.string(),
  name: z.string(),
  arguments: z.string().describe('Raw JSON text of the arguments'),
});

/** A message of a run's history. */
export const messageSchema = z.discriminatedUnion('role', [
  z.object({ role: z.literal('user'), content: z.string() }),
  z.object({
    role: z.literal('assistant'),
    content: z.string().nullable(),
    toolCalls: z.array(toolCallRequest).optional(),
  }),
  z.object({
    role: z.literal('tool'),
    toolCallId: z.string(),
    name: z.string(),
    content: z.string(),
    isError: z.boolean().optional(),
  }),
]);

const modelUsage = z.object({
  input_tokens: z.number(),
  cached_input_tokens: z
    .number()
    .describe("A part of input_tokens served from the provider's cache"),
  output_tokens: z.number(),
  cost_usd: z.number().describe("USD at the workers' CAIRN_MODEL_PRICES"),
});

/** Token usage and cost summed over a run's model responses, by model too. */
export const usageSchema = modelUsage.extend({
  total_tokens: z.number(),
  by_model: z.record(z.string(), modelUsage),
});

const toolCallView = z.object({
  tool_call_id: z.string(),
  name: z.string(),
  args: z.unknown(),
  result: z.string().nullable(),
  status: z.enum(['running', 'completed', 'error']),
  batch: z.number(),
  idempotency_key: z.string(),
  child_run_id: z.string().nullable(),
  started_at: timestamp,
  ended_at: optionalTimestamp,
});

const attemptView = z.object({
  epoch: z.number(),
  worker_id: z.string(),
  reason: z.string().describe('run, continue, recovered, reconciled, handover or capacity'),
  started_at: timestamp,
  ended_at: optionalTimestamp,
  outcome: z.string().nullable(),
});

/** A tool call waiting for a person. */
export const pendingActionSchema = z.object({
  action_id: z.string(),
  kind: z.enum(['approval', 'external', 'budget', 'suspended']),
  run_id: z.string().describe("The run that made the call (the member run for a member's action)"),
  member_path: z.array(z.string()),
  tool_call_id: z.string(),
  tool: z.string(),
  args: z.unknown(),
  args_digest: z
    .string()
    .describe('Send it back with a decision: 412 if the call changed meanwhile'),
  status: z.string(),
  expires_at: optionalTimestamp,
  decided_at: optionalTimestamp,
  created_at: timestamp,
});

const runError = z.object({
  name: z.string(),
  message: z.string(),
  retryable: z.boolean().optional(),
});

const checkpointView = z.object({
  seq: z.number().describe('1-based: fork here with { "at": { "checkpoint": seq } }'),
  message_index: z.number(),
  at: timestamp,
  epoch: z.number(),
});

/** Where a fork came from. */
export const forkedFromSchema = z.object({
  run_id: z.string(),
  checkpoint: z.number(),
  message_index: z.number(),
});

const runWaiting = z.object({ for: z.literal('capacity'), model: z.string(), until: timestamp });

const runBudget = z.object({
  max_tokens: z.number().nullable(),
  max_cost_usd: z.number().nullable(),
  decision_timeout_ms: z.number().nullable(),
});

/** A run as `GET /v1/runs/{run_id}` answers it (docs/http-api.md). */
export const runViewSchema = z.object({
  run_id: z.string(),
  session_id: z.string(),
  user_id: z.string().nullable(),
  parent_run_id: z.string().nullable(),
  parent_tool_call_id: z.string().nullable(),
  entity: entityRef,
  status: runStatus,
  input: z.string(),
  content: z.string().nullable(),
  checkpoint: checkpointMode,
  last_checkpoint_at_message_index: z.number(),
  epoch: z.number(),
  messages: z.array(messageSchema),
  tools: z.array(toolCallView),
  get member_runs(): z.ZodArray<typeof runViewSchema> {
    return z.array(runViewSchema);
  },
  attempts: z.array(attemptView),
  pending_actions: z.array(pendingActionSchema),
  error: runError.nullable(),
  usage: usageSchema,
  usage_total: usageSchema,
  budget: runBudget.nullable(),
  metadata: z.record(z.string(), z.unknown()),
  cancel_requested_at: optionalTimestamp,
  definition_hash: z.string().nullable(),
  priority: z.number(),
  waiting: runWaiting.nullable(),
  deadline_at: optionalTimestamp,
  checkpoints: z.array(checkpointView),
  forked_from: forkedFromSchema.nullable(),
  forks: z.array(z.string()),
  created_at: timestamp,
  updated_at: timestamp,
});

/** What `POST /v1/{agents,teams}/{name}/runs` answers. */
export const createdRunSchema = z.object({
  run_id: z.string(),
  session_id: z.string(),
  status: runStatus,
});

/** What `POST /v1/runs/{run_id}/continue` answers. */
export const continuedRunSchema = createdRunSchema.extend({
  action: z.string().describe('resume (same run), fork (a new run) or already-queued'),
});

/** What `POST /v1/runs/{run_id}/fork` answers. */
export const forkedRunSchema = createdRunSchema.extend({ forked_from: forkedFromSchema });

/** What `POST /v1/runs/{run_id}/cancel` answers. */
export const cancelledRunSchema = createdRunSchema.extend({ cancel_requested: z.literal(true) });

/** What `POST /v1/runs/{run_id}/suspend` answers. */
export const suspendedRunSchema = createdRunSchema.extend({
  suspend: z
    .enum(['suspended', 'requested', 'already'])
    .describe(
      'suspended: at once (the run was queued or paused); requested: the run stops at its next checkpoint boundary; already: a suspension waits already',
    ),
  action_id: z
    .string()
    .nullable()
    .describe(
      'The `suspended` action the run waits on (null until a requested suspend is reached)',
    ),
});

/** What `POST /v1/runs/{run_id}/resume` answers. */
export const resumedRunSchema = createdRunSchema.extend({
  resumed: z
    .boolean()
    .describe('true: this call resumed the run; false: it was resumed before (a no-op)'),
  action_id: z.string().describe('The `suspended` action this resume decided'),
});

/** What `POST /v1/runs/{run_id}/decisions` answers. */
export const decisionsResultSchema = z.object({
  applied: z.array(z.string()),
  already_decided: z.array(z.string()),
  pending: z.number().describe('Actions of the run still undecided'),
  status: runStatus,
});

/** A run listed in its session, without history. */
const runSummarySchema = runViewSchema.pick({
  run_id: true,
  entity: true,
  status: true,
  input: true,
  content: true,
  checkpoint: true,
  last_checkpoint_at_message_index: true,
  error: true,
  usage: true,
  waiting: true,
  created_at: true,
  updated_at: true,
});

/** What `GET /v1/sessions/{session_id}` answers: the session and its top-level runs, oldest first. */
export const sessionViewSchema = z.object({
  session_id: z.string(),
  user_id: z.string().nullable(),
  created_at: timestamp,
  updated_at: timestamp,
  runs: z.array(runSummarySchema),
});

/** The body of every error answer (`toErrorResponse`). */
export const errorBodySchema = z.object({
  error: z.string().describe('A stable code: run_not_found, invalid_body, unauthorized, ...'),
  message: z.string(),
  issues: z
    .array(z.object({ path: z.string(), message: z.string() }))
    .optional()
    .describe('invalid_body: each field and what is wrong with it'),
  budget: z
    .object({
      scope: z.literal('tenant'),
      tenant: z.string(),
      day: z.string(),
      spent_usd: z.number(),
      max_cost_usd: z.number(),
    })
    .optional()
    .describe("budget_exhausted: the tenant's spent UTC day, what it spent and its day budget"),
});
