import type { Agent } from './agent.js';
import { Entity, type EntityOptions } from './entity.js';
import { UserError } from './errors.js';

/** Name of the tool a team's model calls to hand a task to a member. */
export const DELEGATE_TOOL_NAME = 'delegate_task_to_member';

/** Options of {@link Team}: those every entity has ({@link EntityOptions}) and its members. */
export interface TeamOptions<Output = unknown> extends EntityOptions<Output> {
  /** Agents, and teams: a team member runs as a member run of its own, delegating to its members in turn. */
  members: (Agent | Team)[];
}

/**
 * A model that leads members (agents, or teams): it gets the generated tool
 * `delegate_task_to_member({ member, task })`, and each delegation runs the
 * member as a child run with its own checkpoints.
 */
export class Team<Output = unknown> extends Entity<Output> {
  readonly kind = 'team' as const;
  readonly members: readonly (Agent | Team)[];

  constructor(options: TeamOptions<Output>) {
    super('team', options);
    if (!Array.isArray(options.members) || options.members.length === 0) {
      throw new UserError(`team "${options.name}": members must list at least one agent or team`);
    }
    const names = new Set<string>();
    for (const member of options.members) {
      if (names.has(member.name)) {
        throw new UserError(`team "${options.name}": duplicate member "${member.name}"`);
      }
      names.add(member.name);
    }
    if (this.tools.some((t) => t.name === DELEGATE_TOOL_NAME)) {
      throw new UserError(
        `team "${options.name}": a tool may not be named "${DELEGATE_TOOL_NAME}" (the generated delegation tool)`,
      );
    }
    this.members = options.members;
  }

  /** The member called `name`, if any. */
  member(name: string): Agent | Team | undefined {
    return this.members.find((m) => m.name === name);
  }
}
