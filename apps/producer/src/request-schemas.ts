import { budgetLimitProblem, CHECKPOINT_MODES, MAX_DEADLINE_MS } from '@cairn/engine';
import { z } from 'zod';

/** Longest accepted `input` by default, in characters (a longer one is a 422, see `AppLimits`). */
export const MAX_INPUT_LENGTH = 100_000;

const input = z.string().refine((value) => value.trim() !== '', 'must be a non-empty string');

/** A deadline in ms: a positive integer, at most 365 days. */
const deadlineMs = z
  .number({ error: 'must be a positive integer number of milliseconds' })
  .int('must be a positive integer number of milliseconds')
  .positive('must be a positive integer number of milliseconds')
  .max(MAX_DEADLINE_MS, `must be at most ${MAX_DEADLINE_MS} (365 days)`);

/** A budget limit, in the engine's range (`budgetLimitProblem`: one micro-dollar or token up to a ceiling). */
const budgetLimit = (limit: 'max_tokens' | 'max_cost_usd') =>
  z.number().superRefine((value, ctx) => {
    const problem = budgetLimitProblem(limit, value);
    if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
  });

/** A budget: at least one of its limits, each in range. */
const budgetSchema = z
  .strictObject({
    max_tokens: budgetLimit('max_tokens').optional(),
    max_cost_usd: budgetLimit('max_cost_usd').optional(),
    /** How long a budget pause waits for a decision before it is decided as rejected. */
    decision_timeout_ms: z.number().int().positive().max(MAX_DEADLINE_MS).optional(),
  })
  .refine((b) => b.max_tokens !== undefined || b.max_cost_usd !== undefined, {
    message: 'give max_tokens or max_cost_usd',
  });

/** Body of `POST /v1/agents/:name/runs` and `POST /v1/teams/:name/runs`. */
export const createRunBodySchema = z.strictObject({
  input,
  session_id: z.string().min(1).max(200).optional(),
  user_id: z.string().min(1).max(200).optional(),
  checkpoint: z.enum(CHECKPOINT_MODES).optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  /** 1 (highest) to 10: orders the tenant's own runs, in the queue and waiting for a model's permits (tenants share both by weight). */
  priority: z.number().int().min(1).max(10).optional(),
  /** The run must end within this many ms of its creation (default: the entity's `maxDurationMs`). */
  deadline_ms: deadlineMs.optional(),
  /** What the run's tree may spend before it pauses for a person (the entity's `budget` when absent). */
  budget: budgetSchema.optional(),
});

/** Body of `POST /v1/runs/:run_id/continue` (an empty body is `{}`). */
export const continueRunBodySchema = z.strictObject({
  input: input.optional(),
  fork: z.boolean().optional(),
  /** Resume a RUNNING or ERROR run on the workers' current definition of its entity. */
  upgrade: z.boolean().optional(),
  /** A new deadline, in ms from the continue (a fork: from its creation); required to resume a run past its deadline. */
  deadline_ms: deadlineMs.optional(),
});

const actionId = z.string().min(1).max(200);
const argsDigest = z
  .string()
  .regex(/^[0-9a-f]{64}$/, 'must be the 64-hex-digit args_digest of the action')
  .optional();

/** One decision of `POST /v1/runs/:run_id/decisions`, by `type`. */
export const decisionSchema = z.discriminatedUnion('type', [
  z.strictObject({
    action_id: actionId,
    type: z.literal('approve'),
    args_digest: argsDigest,
    /** For a budget action: the raised budget (each limit above what was spent). */
    budget: budgetSchema.optional(),
  }),
  z.strictObject({
    action_id: actionId,
    type: z.literal('edit'),
    args: z.record(z.string(), z.unknown()),
    args_digest: argsDigest,
  }),
  z.strictObject({
    action_id: actionId,
    type: z.literal('reject'),
    message: z.string().max(10_000).optional(),
    args_digest: argsDigest,
  }),
  z.strictObject({
    action_id: actionId,
    type: z.literal('result'),
    output: z.string(),
    is_error: z.boolean().optional(),
    args_digest: argsDigest,
  }),
]);

/** Body of `POST /v1/runs/:run_id/decisions`. */
export const decisionsBodySchema = z.strictObject({
  decisions: z.array(decisionSchema).min(1, 'must hold at least one decision').max(100),
});

/** Body of `POST /v1/runs/:run_id/cancel`: empty, or `{}`. */
export const cancelRunBodySchema = z.strictObject({});

/** Body of `POST /v1/runs/:run_id/suspend`: empty, or `{ now?: boolean }` (`now`: abort the calls in flight too). */
export const suspendRunBodySchema = z.strictObject({
  now: z.boolean().optional(),
});

/** Body of `POST /v1/runs/:run_id/resume`: empty, or `{}`. */
export const resumeRunBodySchema = z.strictObject({});

/** Body of `POST /v1/runs/:run_id/fork` (an empty body is `{}`: a fork at the last checkpoint). */
export const forkRunBodySchema = z.strictObject({
  /** The point: a checkpoint by its number, or the message index one ends at (default: the last). */
  at: z
    .union([
      z.strictObject({ checkpoint: z.number().int().positive() }),
      z.strictObject({ message_index: z.number().int().positive() }),
    ])
    .optional(),
  input: input.optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  session_id: z.string().min(1).max(200).optional(),
  /** The fork must end within this many ms of its creation (default: the entity's `maxDurationMs`). */
  deadline_ms: deadlineMs.optional(),
});

/** A parsed decisions body. */
export type DecisionsBody = z.infer<typeof decisionsBodySchema>;
