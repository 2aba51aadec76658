import { z } from 'zod';
import { RunFileError } from '../errors.js';
import { ACTION_KINDS, ACTION_STATUSES } from '../hitl/pending-action.js';
import { RUN_STATUSES } from '../lifecycle/run-status.js';
import { STORED_MESSAGE } from '../lifecycle/stored-state.js';
import { toolCallCapProblem } from '../runner/tool-call-cap.js';
import { CHECKPOINT_MODES, ENTITY_KINDS } from '../run-types.js';

/** The `schema` of a run file. */
export const RUN_EXPORT_SCHEMA = 'cairn.run-export';
/** The `schema_version` this code writes and reads. */
export const RUN_EXPORT_VERSION = 1;

const EXPORTED_TOOL_CALL = z.object({
  tool_call_id: z.string(),
  name: z.string(),
  args: z.unknown(),
  result: z.string().nullable(),
  status: z.enum(['running', 'completed', 'error']),
  batch: z.number().int(),
  child_run_id: z.string().nullable(),
});

const EXPORTED_DECISION = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('approve') }),
  z.object({ type: z.literal('edit'), args: z.record(z.string(), z.unknown()) }),
  z.object({ type: z.literal('reject'), message: z.string().optional() }),
  z.object({ type: z.literal('result'), output: z.string(), isError: z.boolean().optional() }),
]);

const EXPORTED_ACTION = z.object({
  action_id: z.string(),
  kind: z.enum(ACTION_KINDS),
  tool_call_id: z.string(),
  tool: z.string(),
  args: z.unknown(),
  batch: z.number().int(),
  status: z.enum(ACTION_STATUSES),
  decision: EXPORTED_DECISION.nullable(),
  decided_at: z.iso.datetime({ offset: true }).nullable(),
});

const EXPORTED_RUN = z.object({
  run_id: z.string(),
  parent_run_id: z.string().nullable(),
  parent_tool_call_id: z.string().nullable(),
  entity: z.object({ kind: z.enum(ENTITY_KINDS), name: z.string() }),
  status: z.enum(RUN_STATUSES),
  checkpoint: z.enum(CHECKPOINT_MODES),
  input: z.string(),
  content: z.string().nullable(),
  definition_hash: z.string().nullable(),
  // A turn the engine would refuse is refused here too: a file is no way around the cap.
  messages: z.array(STORED_MESSAGE).superRefine((messages, ctx) =>
    messages.forEach((message, index) => {
      const problem =
        message.role === 'assistant' && toolCallCapProblem(message.toolCalls?.length ?? 0);
      if (problem) ctx.addIssue({ code: 'custom', path: [index, 'toolCalls'], message: problem });
    }),
  ),
  tool_calls: z.array(EXPORTED_TOOL_CALL),
  actions: z.array(EXPORTED_ACTION),
});

const RUN_EXPORT = z.object({
  schema: z.literal(RUN_EXPORT_SCHEMA),
  schema_version: z.literal(RUN_EXPORT_VERSION),
  exported_at: z.iso.datetime({ offset: true }),
  run: EXPORTED_RUN,
  members: z.array(EXPORTED_RUN),
});

/** One run of a run file: what replaying it needs, as it was stored. */
export type ExportedRun = z.infer<typeof EXPORTED_RUN>;
/** A pending action of an exported run, with its decision. */
export type ExportedAction = z.infer<typeof EXPORTED_ACTION>;

/**
 * A run as a file (`npm run replay -- --export`): the run and every member
 * run under it (each linked to its team's tool call by `parent_tool_call_id`
 * and the call's `child_run_id`), enough to replay it with no database.
 */
export type RunExport = z.infer<typeof RUN_EXPORT>;

/**
 * Checks parsed JSON as a run file; throws a {@link RunFileError} naming the
 * problem (another schema, another `schema_version`, the first malformed field).
 */
export function parseRunExport(value: unknown, source = 'run file'): RunExport {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new RunFileError(source, 'not a run file: expected a JSON object');
  const { schema, schema_version: version } = value as Record<string, unknown>;
  if (schema !== RUN_EXPORT_SCHEMA)
    throw new RunFileError(
      source,
      `not a run file: schema is ${JSON.stringify(schema)}, expected "${RUN_EXPORT_SCHEMA}"`,
    );
  if (version !== RUN_EXPORT_VERSION)
    throw new RunFileError(
      source,
      `schema_version ${JSON.stringify(version)} is not supported: this Cairn reads version ${RUN_EXPORT_VERSION}`,
    );
  const parsed = RUN_EXPORT.safeParse(value);
  if (!parsed.success) {
    const [issue] = parsed.error.issues;
    const where = issue?.path.length ? issue.path.join('.') : 'file';
    throw new RunFileError(source, `malformed run file: ${where}: ${issue?.message ?? 'invalid'}`);
  }
  return parsed.data;
}
