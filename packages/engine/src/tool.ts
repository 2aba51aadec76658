import { z } from 'zod';
import { UserError } from './errors.js';
import type { ToolSpec } from './model.js';

/** What a tool's `execute` receives besides its arguments. */
export interface ToolContext {
  /** Aborted when the run is cancelled or this execution loses the run. */
  signal: AbortSignal;
  runId: string;
  toolCallId: string;
  /** Stable across re-executions of the same call: pass it to external systems to dedupe writes. */
  idempotencyKey: string;
  /** Fencing token of the execution calling the tool, for tools that guard external writes. */
  epoch: number;
}

/** Options of {@link tool}. */
export interface ToolOptions<Schema extends z.ZodObject> {
  /** Unique within an agent: letters, digits, `_` and `-`, at most 64 characters. */
  name: string;
  description: string;
  /** A zod object schema; sent to the model as JSON Schema and checked before `execute`. */
  parameters: Schema;
  execute(args: z.infer<Schema>, context: ToolContext): unknown;
  /**
   * How long one call may take before it becomes a tool error.
   * @defaultValue 60_000
   */
  timeoutMs?: number;
}

/** A tool an agent can call. Build one with {@link tool}. */
export interface Tool {
  readonly name: string;
  readonly description: string;
  readonly parameters: z.ZodObject;
  readonly timeoutMs: number;
  /** JSON Schema of the parameters, computed once. */
  readonly spec: ToolSpec;
  execute(args: unknown, context: ToolContext): unknown;
}

/** Default per-call tool timeout. */
export const DEFAULT_TOOL_TIMEOUT_MS = 60_000;

const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * Defines a tool.
 *
 * @example
 * ```ts
 * const add = tool({
 *   name: 'add',
 *   description: 'Adds two numbers',
 *   parameters: z.object({ a: z.number(), b: z.number() }),
 *   execute: ({ a, b }) => a + b,
 * });
 * ```
 */
export function tool<Schema extends z.ZodObject>(options: ToolOptions<Schema>): Tool {
  if (!TOOL_NAME_PATTERN.test(options.name ?? '')) {
    throw new UserError(
      `tool name ${JSON.stringify(options.name)} is invalid: use 1-64 letters, digits, "_" or "-"`,
    );
  }
  if (!(options.parameters instanceof z.ZodObject)) {
    throw new UserError(`tool "${options.name}": parameters must be a z.object(...) schema`);
  }
  if (typeof options.execute !== 'function') {
    throw new UserError(`tool "${options.name}": execute must be a function`);
  }
  const timeoutMs = options.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    throw new UserError(`tool "${options.name}": timeoutMs must be a positive number`);
  }
  const parameters = jsonSchemaOf(options.parameters);
  return {
    name: options.name,
    description: options.description,
    parameters: options.parameters,
    timeoutMs,
    spec: { name: options.name, description: options.description, parameters },
    execute: options.execute as Tool['execute'],
  };
}

/** Throws a UserError when two tools share a name. */
export function assertUniqueToolNames(owner: string, tools: readonly Tool[]): void {
  const seen = new Set<string>();
  for (const t of tools) {
    if (seen.has(t.name)) throw new UserError(`${owner}: duplicate tool name "${t.name}"`);
    seen.add(t.name);
  }
}

/** JSON Schema of a zod object, as models take it (no `$schema` key). */
export function jsonSchemaOf(schema: z.ZodObject): Record<string, unknown> {
  const { $schema: _ignored, ...jsonSchema } = z.toJSONSchema(schema) as Record<string, unknown>;
  return jsonSchema;
}
