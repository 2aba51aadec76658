import { z } from 'zod';
import { UserError } from './errors.js';
import type { ToolSpec } from './model.js';

/** What a tool's `execute` receives besides its arguments; `Ctx` types the app's {@link ToolContext.context}. */
export interface ToolContext<Ctx = unknown> {
  /** Aborted when the run is cancelled or this execution loses the run. */
  signal: AbortSignal;
  runId: string;
  toolCallId: string;
  /** Stable across re-executions of the same call: pass it to external systems to dedupe writes. */
  idempotencyKey: string;
  /** Fencing token of the execution calling the tool, for tools that guard external writes. */
  epoch: number;
  /**
   * The app's context (database handles, clients, settings): given to
   * `engine.run(..., { context })` or `startWorker({ context })`; undefined
   * when none was. Type it with `tool<Ctx>()`.
   */
  context: Ctx;
}

/** What a `needsApproval` function receives besides the call's arguments. */
export interface ApprovalCheckContext {
  runId: string;
  toolCallId: string;
  signal: AbortSignal;
}

/** Decides, from a call's validated arguments, whether a person must approve it first. */
export type NeedsApproval<Args> =
  boolean | ((args: Args, context: ApprovalCheckContext) => boolean | Promise<boolean>);

/** What happens to a gated call nobody decides in time. */
export const APPROVAL_TIMEOUT_OUTCOMES = ['reject', 'error'] as const;
/** `reject`: the call is rejected with "approval timed out"; `error`: the run ends in ERROR. */
export type ApprovalTimeoutOutcome = (typeof APPROVAL_TIMEOUT_OUTCOMES)[number];

/** How long a gated call waits for a person. */
export interface ApprovalOptions {
  /** Milliseconds from the pause until the pending action expires; unset: it never does. */
  timeoutMs?: number;
  /** @defaultValue 'reject' */
  onTimeout?: ApprovalTimeoutOutcome;
}

interface ToolOptionsBase<Schema extends z.ZodObject> {
  /** Unique within an agent: letters, digits, `_` and `-`, at most 64 characters. */
  name: string;
  description: string;
  /** A zod object schema; sent to the model as JSON Schema and checked before `execute`. */
  parameters: Schema;
  /**
   * How long one call may take before it becomes a tool error.
   * @defaultValue 60_000
   */
  timeoutMs?: number;
  /** Expiry of the pending action a gated call becomes; only on a gated tool. */
  approval?: ApprovalOptions;
}

/** A tool the worker executes, optionally after a person approves (or edits) the call. */
export interface ExecutedToolOptions<
  Schema extends z.ZodObject,
  Ctx = unknown,
> extends ToolOptionsBase<Schema> {
  execute(args: z.infer<Schema>, context: ToolContext<Ctx>): unknown;
  /**
   * Whether a person must approve, edit or reject a call before it executes.
   * @defaultValue false
   */
  needsApproval?: NeedsApproval<z.infer<Schema>>;
  external?: false;
}

/** A tool whose result the caller supplies (user input, work done outside): every call pauses the run. */
export interface ExternalToolOptions<Schema extends z.ZodObject> extends ToolOptionsBase<Schema> {
  external: true;
  execute?: never;
  needsApproval?: never;
}

/** Options of {@link tool}. */
export type ToolOptions<Schema extends z.ZodObject, Ctx = unknown> =
  ExecutedToolOptions<Schema, Ctx> | ExternalToolOptions<Schema>;

/** A gated tool's expiry, with defaults applied. */
export interface ResolvedApproval {
  /** Null: the pending action never expires. */
  timeoutMs: number | null;
  onTimeout: ApprovalTimeoutOutcome;
}

/** A tool an agent can call. Build one with {@link tool}. */
export interface Tool {
  readonly name: string;
  readonly description: string;
  readonly parameters: z.ZodObject;
  readonly timeoutMs: number;
  /** JSON Schema of the parameters, computed once. */
  readonly spec: ToolSpec;
  /** True when the caller supplies every result; `execute` then throws. */
  readonly external: boolean;
  /** Expiry of the tool's pending actions; null for a tool that is never gated. */
  readonly approval: ResolvedApproval | null;
  /** The MCP server the tool's calls go to (the name it gives itself), for a tool from `mcpTools`; its calls' `ToolCallStarted` events and the run page show it. */
  readonly mcpServer?: string;
  /** Whether this call (validated arguments) must wait for a person: always for an external tool. */
  isGated(args: unknown, context: ApprovalCheckContext): Promise<boolean>;
  execute(args: unknown, context: ToolContext): unknown;
}

/** Default per-call tool timeout. */
export const DEFAULT_TOOL_TIMEOUT_MS = 60_000;

const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * Defines a tool. `tool<Ctx>()` (no arguments) returns a `tool` whose
 * `execute` sees the app's context typed as `Ctx`.
 *
 * @example
 * ```ts
 * const add = tool({
 *   name: 'add',
 *   description: 'Adds two numbers',
 *   parameters: z.object({ a: z.number(), b: z.number() }),
 *   execute: ({ a, b }) => a + b,
 * });
 *
 * const appTool = tool<{ orders: OrderService }>();
 * const findOrder = appTool({
 *   name: 'find_order',
 *   description: 'Finds an order',
 *   parameters: z.object({ id: z.string() }),
 *   execute: ({ id }, ctx) => ctx.context.orders.find(id),
 * });
 * ```
 */
export function tool<Ctx>(): <Schema extends z.ZodObject>(
  options: ToolOptions<Schema, Ctx>,
) => Tool;
export function tool<Schema extends z.ZodObject>(options: ToolOptions<Schema>): Tool;
export function tool<Schema extends z.ZodObject>(
  options?: ToolOptions<Schema>,
): Tool | ((options: ToolOptions<z.ZodObject>) => Tool) {
  if (options === undefined) return (typed) => defineTool(typed);
  return defineTool(options);
}

function defineTool<Schema extends z.ZodObject>(options: ToolOptions<Schema>): Tool {
  if (!TOOL_NAME_PATTERN.test(options.name ?? '')) {
    throw new UserError(
      `tool name ${JSON.stringify(options.name)} is invalid: use 1-64 letters, digits, "_" or "-"`,
    );
  }
  const name = options.name;
  if (!(options.parameters instanceof z.ZodObject)) {
    throw new UserError(`tool "${name}": parameters must be a z.object(...) schema`);
  }
  const timeoutMs = options.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    throw new UserError(`tool "${name}": timeoutMs must be a positive number`);
  }
  const gate = resolveGate(options);
  const parameters = jsonSchemaOf(options.parameters);
  return {
    name,
    description: options.description,
    parameters: options.parameters,
    timeoutMs,
    spec: { name, description: options.description, parameters },
    external: gate.external,
    approval: gate.approval,
    isGated: gate.isGated,
    execute:
      options.execute ??
      (() => {
        throw new UserError(`tool "${name}" is external: its result is supplied by a decision`);
      }),
  };
}

interface ResolvedGate {
  external: boolean;
  approval: ResolvedApproval | null;
  isGated: Tool['isGated'];
}

/** Checks the human-in-the-loop options together; throws a UserError naming the nonsense. */
function resolveGate(options: ToolOptions<z.ZodObject>): ResolvedGate {
  const name = options.name;
  const external = (options as { external?: unknown }).external;
  if (external !== undefined && typeof external !== 'boolean') {
    throw new UserError(`tool "${name}": external must be true or false`);
  }
  const needsApproval: unknown = options.needsApproval;
  if (external === true) {
    if (options.execute !== undefined) {
      throw new UserError(
        `tool "${name}": an external tool has no execute (its result is supplied by a decision)`,
      );
    }
    if (needsApproval !== undefined) {
      throw new UserError(
        `tool "${name}": needsApproval does not apply to an external tool (every call waits for its result)`,
      );
    }
  } else if (typeof options.execute !== 'function') {
    throw new UserError(`tool "${name}": execute must be a function (or set external: true)`);
  }
  if (
    needsApproval !== undefined &&
    typeof needsApproval !== 'boolean' &&
    typeof needsApproval !== 'function'
  ) {
    throw new UserError(
      `tool "${name}": needsApproval must be a boolean or a function of the arguments`,
    );
  }
  const mayGate = external === true || (needsApproval !== undefined && needsApproval !== false);
  const approval = resolveApproval(name, options.approval, mayGate);
  const isGated: Tool['isGated'] =
    external === true || needsApproval === true
      ? () => Promise.resolve(true)
      : typeof needsApproval === 'function'
        ? async (args, context) =>
            (await (needsApproval as (a: unknown, c: unknown) => unknown)(args, context)) === true
        : () => Promise.resolve(false);
  return { external: external === true, approval, isGated };
}

function resolveApproval(
  name: string,
  approval: unknown,
  mayGate: boolean,
): ResolvedApproval | null {
  if (approval === undefined) return mayGate ? { timeoutMs: null, onTimeout: 'reject' } : null;
  if (!mayGate) {
    throw new UserError(
      `tool "${name}": approval applies only to a gated tool (set needsApproval or external)`,
    );
  }
  if (typeof approval !== 'object' || approval === null) {
    throw new UserError(`tool "${name}": approval must be an object { timeoutMs?, onTimeout? }`);
  }
  const { timeoutMs, onTimeout, ...rest } = approval as Record<string, unknown>;
  const unknownKey = Object.keys(rest)[0];
  if (unknownKey !== undefined) {
    throw new UserError(
      `tool "${name}": approval.${unknownKey} is not an option (timeoutMs, onTimeout)`,
    );
  }
  if (
    timeoutMs !== undefined &&
    (typeof timeoutMs !== 'number' || !Number.isInteger(timeoutMs) || timeoutMs <= 0)
  ) {
    throw new UserError(
      `tool "${name}": approval.timeoutMs must be a positive integer of milliseconds`,
    );
  }
  if (
    onTimeout !== undefined &&
    !(APPROVAL_TIMEOUT_OUTCOMES as readonly unknown[]).includes(onTimeout)
  ) {
    throw new UserError(
      `tool "${name}": approval.onTimeout must be one of ${APPROVAL_TIMEOUT_OUTCOMES.join(', ')}`,
    );
  }
  if (onTimeout !== undefined && timeoutMs === undefined) {
    throw new UserError(`tool "${name}": approval.onTimeout needs approval.timeoutMs`);
  }
  return {
    timeoutMs: (timeoutMs as number | undefined) ?? null,
    onTimeout: (onTimeout as ApprovalTimeoutOutcome | undefined) ?? 'reject',
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
