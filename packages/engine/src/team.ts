import type { Agent } from './agent.js';
import { DEFAULT_MAX_TURNS, validateEntityOptions } from './agent.js';
import { UserError } from './errors.js';
import type { Model } from './model.js';
import type { CheckpointMode } from './run-types.js';

/** Name of the tool a team's model calls to hand a task to a member. */
export const DELEGATE_TOOL_NAME = 'delegate_task_to_member';

/** Options of {@link Team}. */
export interface TeamOptions {
  name: string;
  model: Model;
  members: Agent[];
  instructions?: string;
  /** @defaultValue 'run' */
  checkpoint?: CheckpointMode;
  /** @defaultValue 20 */
  maxTurns?: number;
}

/**
 * A model that leads member agents: it gets the generated tool
 * `delegate_task_to_member({ member, task })`, and each delegation runs the
 * member as a child run with its own checkpoints.
 */
export class Team {
  readonly kind = 'team' as const;
  readonly name: string;
  readonly model: Model;
  readonly members: readonly Agent[];
  readonly instructions: string;
  readonly checkpoint: CheckpointMode;
  readonly maxTurns: number;

  constructor(options: TeamOptions) {
    validateEntityOptions('team', options);
    if (!Array.isArray(options.members) || options.members.length === 0) {
      throw new UserError(`team "${options.name}": members must list at least one agent`);
    }
    const names = new Set<string>();
    for (const member of options.members) {
      if (names.has(member.name)) {
        throw new UserError(`team "${options.name}": duplicate member "${member.name}"`);
      }
      names.add(member.name);
    }
    this.name = options.name;
    this.model = options.model;
    this.members = options.members;
    this.instructions = options.instructions ?? '';
    this.checkpoint = options.checkpoint ?? 'run';
    this.maxTurns = options.maxTurns ?? DEFAULT_MAX_TURNS;
  }

  /** The member called `name`, if any. */
  member(name: string): Agent | undefined {
    return this.members.find((m) => m.name === name);
  }
}
