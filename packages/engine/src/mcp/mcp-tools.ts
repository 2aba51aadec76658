import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Tool as McpToolListing } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { UserError } from '../errors.js';
import { tool, type ApprovalOptions, type NeedsApproval, type Tool } from '../tool.js';
import { mcpClientFor, mcpServerLabel, type McpServerAddress } from './mcp-connection.js';
import { mcpResultText, type McpCallResult } from './mcp-result.js';

/** The `_meta` keys of a call: the same every time the same call of the same run is executed. */
export const MCP_META_IDEMPOTENCY_KEY = 'cairn/idempotency-key';
/** The `_meta` key of the fencing token of the execution making the call. */
export const MCP_META_EPOCH = 'cairn/epoch';

/** Options of {@link mcpTools}. */
export interface McpToolsOptions {
  server: McpServerAddress;
  /**
   * Put before each tool's name with `_` (`github` gives `github_create_issue`), so the tools of
   * two servers cannot clash. Model APIs take letters, digits, `_` and `-` in a tool's name.
   * @defaultValue no prefix
   */
  prefix?: string;
  /** Only these tools, by their names on the server; a name the server lacks is an error. */
  include?: readonly string[];
  /** Not these tools, by their names on the server. */
  exclude?: readonly string[];
  /** How long one call may take, as `tool()`'s. @defaultValue 60_000 */
  timeoutMs?: number;
  /**
   * Whether a person approves a call first: for every tool, for those named (on the server), or
   * decided per call from the tool's name on the server and the call's arguments.
   * @defaultValue false
   */
  needsApproval?:
    | boolean
    | readonly string[]
    | ((toolName: string, args: Record<string, unknown>) => boolean | Promise<boolean>);
  /** Expiry of a gated call's pending action, as `tool()`'s. */
  approval?: ApprovalOptions;
}

/**
 * The tools of an MCP server, as Cairn tools: give them to an agent like any
 * other (checkpointed, never sent again once committed, gated, replayed from
 * stored results). Each call carries the run's idempotency key and the
 * execution's epoch in its `_meta`; an aborted call (a cancel, a deadline)
 * is cancelled at the server; a result with `isError` becomes an error
 * result the model reads. The tools' names and schemas join the agent's
 * definition hash, so a server that changes them changes the definition.
 *
 * The server is connected once per process, on the first call of this
 * function for it; a registry module awaits it at load.
 *
 * @example
 * ```ts
 * const github = await mcpTools({
 *   server: { command: 'github-mcp-server', args: ['stdio'], env: { GITHUB_TOKEN: process.env.GITHUB_TOKEN! } },
 *   prefix: 'github',
 *   include: ['create_issue', 'search_issues'],
 *   needsApproval: ['create_issue'],
 * });
 * const triager = new Agent({ name: 'triager', model, tools: [...github] });
 * ```
 */
export async function mcpTools(options: McpToolsOptions): Promise<Tool[]> {
  const { listed, serverName } = await namingTheServer(options.server, async () => {
    const client = await mcpClientFor(options.server);
    const tools: McpToolListing[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor === undefined ? {} : { cursor });
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    return { listed: tools, serverName: shownName(client, options.server) };
  });
  const names = new Set(listed.map((t) => t.name));
  const missing = (options.include ?? []).filter((name) => !names.has(name));
  if (missing.length > 0) {
    throw new UserError(
      `MCP server has no tool ${missing.map((n) => JSON.stringify(n)).join(', ')} (include); it has ${[...names].join(', ') || 'none'}`,
    );
  }
  return listed
    .filter((t) => options.include?.includes(t.name) ?? true)
    .filter((t) => !(options.exclude ?? []).includes(t.name))
    .map((listing) => ({ ...toolOf(listing, options), mcpServer: serverName }));
}

/**
 * What a tool's calls show as their server (events, the run page): the name the server gave
 * itself when it was connected, else its command or its URL without the query (which may hold a
 * key).
 */
function shownName(client: Client, server: McpServerAddress): string {
  const named = client.getServerVersion()?.name;
  if (named) return named;
  return 'command' in server ? server.command : mcpServerLabel(server);
}

function toolOf(listing: McpToolListing, options: McpToolsOptions): Tool {
  const remoteName = listing.name;
  const gate = gateOf(remoteName, options);
  return tool({
    name: options.prefix === undefined ? remoteName : `${options.prefix}_${remoteName}`,
    description: listing.description ?? listing.title ?? remoteName,
    parameters: parametersOf(listing),
    ...(options.timeoutMs !== undefined && { timeoutMs: options.timeoutMs }),
    ...(gate !== false && { needsApproval: gate }),
    ...(gate !== false && options.approval && { approval: options.approval }),
    execute: async (args, ctx) => {
      const call = {
        name: remoteName,
        arguments: args,
        _meta: { [MCP_META_IDEMPOTENCY_KEY]: ctx.idempotencyKey, [MCP_META_EPOCH]: ctx.epoch },
      };
      const timeout = options.timeoutMs === undefined ? {} : { timeout: options.timeoutMs };
      const result = await namingTheServer(options.server, async () =>
        (await mcpClientFor(options.server)).callTool(call, undefined, {
          signal: ctx.signal,
          ...timeout,
        }),
      );
      const answer = result as McpCallResult;
      const text = mcpResultText(answer);
      if (answer.isError === true) throw new Error(text);
      return text;
    },
  });
}

/**
 * Runs `work` against a server; a failure (a server down, dead or refusing)
 * says which server. A failed call is a tool error the model reads.
 */
async function namingTheServer<T>(server: McpServerAddress, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof UserError) throw error;
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`MCP server ${mcpServerLabel(server)}: ${reason}`, { cause: error });
  }
}

/** A listed tool's input schema as zod: checked before each call; a schema zod cannot read takes any object. */
function parametersOf(listing: McpToolListing): z.ZodObject {
  try {
    const schema = z.fromJSONSchema(listing.inputSchema as Parameters<typeof z.fromJSONSchema>[0]);
    if (schema instanceof z.ZodObject) return schema;
  } catch {
    // falls through: the server checks its own arguments
  }
  return z.looseObject({});
}

function gateOf(
  remoteName: string,
  options: McpToolsOptions,
): false | NeedsApproval<Record<string, unknown>> {
  const rule = options.needsApproval;
  if (rule === undefined || rule === false) return false;
  if (rule === true) return true;
  if (typeof rule === 'function') return (args) => rule(remoteName, args);
  return rule.includes(remoteName) && true;
}
