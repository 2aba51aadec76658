import type { z } from 'zod';
import type { ToolSpec } from './model.js';
import type { ApprovalCheckContext, ResolvedApproval, Tool, ToolContext } from './tool.js';

/** What a tool invocation produced: its output, and the member run it started, if any. */
export interface ToolInvocationResult {
  output: unknown;
  childRunId?: string;
}

/** A tool as the batch executor runs it: user tools and the generated delegation tool alike. */
export interface ExecutableTool {
  readonly name: string;
  readonly spec: ToolSpec;
  readonly parameters: z.ZodObject;
  readonly timeoutMs: number;
  /** The MCP server a tool from `mcpTools` calls. */
  readonly mcpServer?: string;
  /** Set on a tool whose calls may wait for a person (`needsApproval` or `external`). */
  readonly gate?: ToolGate;
  invoke(args: unknown, context: ToolContext): Promise<ToolInvocationResult>;
}

/** How a gated tool's calls wait for a person. */
export interface ToolGate {
  readonly external: boolean;
  readonly approval: ResolvedApproval;
  isGated(args: unknown, context: ApprovalCheckContext): Promise<boolean>;
}

/** Wraps a user-defined tool for the batch executor. */
export function executableFromTool(tool: Tool): ExecutableTool {
  return {
    name: tool.name,
    spec: tool.spec,
    parameters: tool.parameters,
    timeoutMs: tool.timeoutMs,
    ...(tool.mcpServer !== undefined && { mcpServer: tool.mcpServer }),
    ...(tool.approval && {
      gate: {
        external: tool.external,
        approval: tool.approval,
        isGated: (args, context) => tool.isGated(args, context),
      },
    }),
    invoke: async (args, context) => ({ output: await tool.execute(args, context) }),
  };
}
