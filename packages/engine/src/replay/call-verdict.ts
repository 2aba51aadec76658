import type { ExecutableTool } from '../executable-tool.js';
import type { ToolCallRequest, ToolResultMessage } from '../messages.js';
import { DELEGATE_TOOL_NAME } from '../team.js';
import { parseToolArguments } from '../tool-call-outcome.js';
import type { ExportedAction } from './run-export.js';
import type { ReplayDivergence } from './replay-result.js';

/** How a stored run handled a call: ran it, refused it (the engine's own checks), or had a person decide it. */
export type StoredHandling = 'ran' | 'refused' | 'gated';

/** A divergence of one call, before the replay places it (turn, run). */
export type CallDivergence = Pick<ReplayDivergence, 'tool' | 'field' | 'message'>;

/**
 * How the engine words the results of calls it refuses without running them
 * (`executeToolBatch`: unknown tool, bad JSON, invalid arguments;
 * `planToolCalls`: a `needsApproval` that threw).
 */
const REFUSALS = [
  /^Unknown tool "/,
  /^Invalid JSON in arguments for tool "/,
  /^Invalid arguments for tool "/,
  /^Tool "[^"]+" was not run: its approval check failed/,
];

/** How the stored run handled a call, from its stored result and its pending action. */
export function storedHandlingOf(
  result: ToolResultMessage | undefined,
  action: ExportedAction | undefined,
): StoredHandling {
  if (action) return 'gated';
  if (result?.isError && REFUSALS.some((refusal) => refusal.test(result.content))) return 'refused';
  return 'ran';
}

/**
 * Why the current code does not run a call the stored run ran, found with
 * the current tool objects: the tool is gone, its arguments no longer
 * validate against its schema (naming the first field), the delegation
 * names a member the team no longer has, or what the turn loop answered.
 */
export function refusalOf(
  call: ToolCallRequest,
  tools: ReadonlyMap<string, ExecutableTool>,
  owner: string,
  loopResult: string,
): CallDivergence {
  const tool = tools.get(call.name);
  if (!tool)
    return { tool: call.name, message: `tool "${call.name}" no longer exists on ${owner}` };
  let args: unknown;
  try {
    args = parseToolArguments(call);
  } catch (error) {
    return {
      tool: call.name,
      message: `tool "${call.name}" args are no longer read as JSON: ${(error as Error).message}`,
    };
  }
  const parsed = tool.parameters.safeParse(args);
  if (parsed.success)
    return { tool: call.name, message: `tool "${call.name}" is not run now: ${loopResult}` };
  const issue = parsed.error.issues[0]!;
  const field = issue.path.map(String).join('.');
  if (call.name === DELEGATE_TOOL_NAME && field === 'member') {
    const member = (args as { member?: unknown }).member;
    return {
      tool: call.name,
      field,
      message: `delegation names member ${JSON.stringify(member)}, which ${owner} no longer has`,
    };
  }
  return {
    tool: call.name,
    ...(field && { field }),
    message: `tool "${call.name}" args ${preview(args)} no longer valid: ${field ? `${field}: ` : ''}${issue.message}`,
  };
}

/** Arguments as a divergence shows them: JSON, cut at 200 characters. */
export function preview(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 200 ? `${text.slice(0, 197)}...` : text;
}
