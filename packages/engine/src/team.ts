import type { Agent } from './agent.js';
import { budgetOf, type Budget, type BudgetOption } from './spend/budget-option.js';
import { capsOf, type EntityCaps, type EntityCapsOption } from './entity-caps.js';
import { DEFAULT_CHECKPOINT_MODE, DEFAULT_MAX_TURNS, validateEntityOptions } from './agent.js';
import { UserError } from './errors.js';
import type { z } from 'zod';
import type { Model } from './model.js';
import type { CheckpointMode } from './run-types.js';
import { assertUniqueToolNames, type Tool } from './tool.js';
import type { DefinitionChangePolicy } from './definition-change-policy.js';

/** Name of the tool a team's model calls to hand a task to a member. */
export const DELEGATE_TOOL_NAME = 'delegate_task_to_member';

/** Options of {@link Team}. */
export interface TeamOptions<Output = unknown> {
  name: string;
  /** One line on what the team does; a team it is a member of shows it to its model. */
  role?: string;
  model: Model;
  /** Agents, and teams: a team member runs as a member run of its own, delegating to its members in turn. */
  members: (Agent | Team)[];
  instructions?: string;
  /** Tools of the team's own model, offered beside the delegation tool. */
  tools?: Tool[];
  /** When a run of this team persists its progress. @defaultValue {@link DEFAULT_CHECKPOINT_MODE} ('tool-batch') */
  checkpoint?: CheckpointMode;
  /** @defaultValue 20 */
  maxTurns?: number;
  /** The shape of the team's final answer, as an agent's `outputType`. */
  outputType?: z.ZodType<Output>;
  /** A label of this definition, as an agent's `version`: part of the team's definition hash. */
  version?: string;
  /** As an agent's `onDefinitionChange`; a team's run resumed on a new definition takes its member runs along. @defaultValue 'error' */
  onDefinitionChange?: DefinitionChangePolicy;
  /**
   * As an agent's `maxDurationMs`: the deadline of a run of this team created without `deadline_ms`.
   * Its member runs share the team run's deadline (a member's own `maxDurationMs` bounds only runs
   * created of it directly). @defaultValue no deadline
   */
  maxDurationMs?: number;
  /** As an agent's `budget`: what a run of this team's tree (the team and its member runs) may spend. @defaultValue none */
  budget?: BudgetOption;
  /**
   * As an agent's `caps`: what a request for a run of this team may not exceed. They bound the
   * team run's budget and deadline, which its member runs share. @defaultValue no caps
   */
  caps?: EntityCapsOption;
}

/**
 * A model that leads members (agents, or teams): it gets the generated tool
 * `delegate_task_to_member({ member, task })`, and each delegation runs the
 * member as a child run with its own checkpoints.
 */
export class Team<Output = unknown> {
  readonly kind = 'team' as const;
  readonly name: string;
  readonly model: Model;
  readonly role: string;
  readonly members: readonly (Agent | Team)[];
  /** The team model's own tools, offered beside `delegate_task_to_member`. */
  readonly tools: readonly Tool[];
  readonly instructions: string;
  readonly checkpoint: CheckpointMode;
  readonly maxTurns: number;
  readonly outputType: z.ZodType<Output> | undefined;
  readonly version: string | undefined;
  readonly onDefinitionChange: DefinitionChangePolicy;
  /** The deadline of its runs created without one, in ms from creation; undefined: none. */
  readonly maxDurationMs: number | undefined;
  /** The budget of its runs created without one (covering its member runs); undefined: none. */
  readonly budget: Budget | undefined;
  /** What a request may not exceed (a budget, a deadline); undefined: none. */
  readonly caps: EntityCaps | undefined;

  constructor(options: TeamOptions<Output>) {
    validateEntityOptions('team', options);
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
    this.name = options.name;
    this.model = options.model;
    this.role = options.role ?? '';
    this.members = options.members;
    const tools = options.tools ?? [];
    if (tools.some((t) => t.name === DELEGATE_TOOL_NAME)) {
      throw new UserError(
        `team "${options.name}": a tool may not be named "${DELEGATE_TOOL_NAME}" (the generated delegation tool)`,
      );
    }
    assertUniqueToolNames(`team "${options.name}"`, tools);
    this.tools = tools;
    this.instructions = options.instructions ?? '';
    this.checkpoint = options.checkpoint ?? DEFAULT_CHECKPOINT_MODE;
    this.maxTurns = options.maxTurns ?? DEFAULT_MAX_TURNS;
    this.outputType = options.outputType;
    this.version = options.version;
    this.onDefinitionChange = options.onDefinitionChange ?? 'error';
    this.maxDurationMs = options.maxDurationMs;
    this.budget = budgetOf(options.budget, `team "${options.name}": budget`);
    this.caps = capsOf(options.caps, `team "${options.name}"`, this);
  }

  /** The member called `name`, if any. */
  member(name: string): Agent | Team | undefined {
    return this.members.find((m) => m.name === name);
  }
}
