import { CHECKPOINT_MODES } from '@cairn/engine';
import { z } from 'zod';

/** Longest accepted `input` by default, in characters (a longer one is a 422, see `AppLimits`). */
export const MAX_INPUT_LENGTH = 100_000;

const input = z.string().refine((value) => value.trim() !== '', 'must be a non-empty string');

/** Body of `POST /v1/agents/:name/runs` and `POST /v1/teams/:name/runs`. */
export const createRunBodySchema = z.strictObject({
  input,
  session_id: z.string().min(1).max(200).optional(),
  user_id: z.string().min(1).max(200).optional(),
  checkpoint: z.enum(CHECKPOINT_MODES).optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
});

/** Body of `POST /v1/runs/:run_id/continue` (an empty body is `{}`). */
export const continueRunBodySchema = z.strictObject({
  input: input.optional(),
  approvals: z.record(z.string(), z.unknown()).optional(),
  fork: z.boolean().optional(),
});

/** Body of `POST /v1/runs/:run_id/cancel`: empty, or `{}`. */
export const cancelRunBodySchema = z.strictObject({});

/** A parsed create-run body. */
export type CreateRunBody = z.infer<typeof createRunBodySchema>;

/** A parsed continue body. */
export type ContinueRunBody = z.infer<typeof continueRunBodySchema>;
