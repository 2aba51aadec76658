import { z } from 'zod';
import type { Agent } from '../agent.js';
import { DELEGATE_TOOL_NAME, type Team } from '../team.js';
import type { ToolContext } from '../tool.js';
import { DEFAULT_TOOL_TIMEOUT_MS, jsonSchemaOf } from '../tool.js';
import type { ExecutableTool, ToolInvocationResult } from '../executable-tool.js';

/** Runs (or resumes) a member's child run for one delegation and returns its answer. */
export type RunMember = (
  member: Agent | Team,
  task: string,
  context: ToolContext,
) => Promise<ToolInvocationResult>;

/** A member run may take as long as its own tools: the delegation waits up to an hour. */
const DELEGATION_TIMEOUT_MS = Math.max(DEFAULT_TOOL_TIMEOUT_MS, 60 * 60_000);

/** Builds the team's generated `delegate_task_to_member({ member, task })` tool. */
export function delegationTool(team: Team, runMember: RunMember): ExecutableTool {
  const names = team.members.map((m) => m.name) as [string, ...string[]];
  const parameters = z.object({
    member: z.enum(names).describe('Name of the member to hand the task to'),
    task: z.string().min(1).describe('What the member should do, with everything it needs to know'),
  });
  const roster = team.members.map((m) => `- ${m.name}: ${m.role || 'no role given'}`).join('\n');
  const description = `Delegate a task to one member of the team and get its answer. Members:\n${roster}`;
  return {
    name: DELEGATE_TOOL_NAME,
    spec: { name: DELEGATE_TOOL_NAME, description, parameters: jsonSchemaOf(parameters) },
    parameters,
    timeoutMs: DELEGATION_TIMEOUT_MS,
    invoke: async (args, context) => {
      const { member, task } = parameters.parse(args);
      return runMember(team.member(member)!, task, context);
    },
  };
}
