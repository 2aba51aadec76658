import type { z } from 'zod';
import {
  DEFINITION_CHANGE_POLICIES,
  type DefinitionChangePolicy,
} from './definition-change-policy.js';
import { isDeadlineMs, MAX_DEADLINE_MS } from './deadline-ms.js';
import { budgetOf, type Budget, type BudgetOption } from './spend/budget-option.js';
import { capsOf, type EntityCaps, type EntityCapsOption } from './entity-caps.js';
import { ENTITY_PATH_SEPARATOR } from './entity-path.js';
import { UserError } from './errors.js';
import type { Model } from './model.js';
import { CHECKPOINT_MODES, type CheckpointMode, type EntityKind } from './run-types.js';
import { assertUniqueToolNames, type Tool } from './tool.js';

/** The checkpoint mode of an entity that names none: durable after every tool batch. */
export const DEFAULT_CHECKPOINT_MODE: CheckpointMode = 'tool-batch';

/** Default bound on model turns per run. */
const DEFAULT_MAX_TURNS = 20;

/** The options agents and teams share: {@link AgentOptions} and {@link TeamOptions} add their own. */
export interface EntityOptions<Output = unknown> {
  name: string;
  /** One line on what the entity does; a team it is a member of shows it to its model. */
  role?: string;
  model: Model;
  /** Tools of the entity's model (a team's are offered beside its delegation tool). */
  tools?: Tool[];
  instructions?: string;
  /** When a run of this entity persists its progress. @defaultValue {@link DEFAULT_CHECKPOINT_MODE} ('tool-batch') */
  checkpoint?: CheckpointMode;
  /** @defaultValue 20 */
  maxTurns?: number;
  /**
   * The shape of the final answer (a zod schema): the model is asked for JSON
   * matching it, an answer that does not gets a retry message, and the run's
   * content holds the validated output, serialized.
   */
  outputType?: z.ZodType<Output>;
  /** A label of this definition (a release, a prompt revision): part of its definition hash, so bumping it marks a change the hash would not see (a tool's code). */
  version?: string;
  /**
   * What a worker does with a run started on another definition of this entity: `error` leaves it for a
   * worker that has the run's definition, then ends it in ERROR (`DefinitionChangedError`); `resume`
   * accepts the change and resumes it on this one (a team's run takes its member runs along).
   * @defaultValue 'error'
   */
  onDefinitionChange?: DefinitionChangePolicy;
  /**
   * The deadline of a run of this entity created without `deadline_ms`: it must end within this many
   * ms of its creation, else it ends in ERROR (`DeadlineExceededError`). Not part of the definition
   * hash (it bounds new runs; a run keeps the deadline it was created with). A team's member runs
   * share the team run's deadline (a member's own `maxDurationMs` bounds only runs created of it
   * directly). @defaultValue no deadline
   */
  maxDurationMs?: number;
  /**
   * The budget of a run of this entity created without one: what its tree (a team's member runs included) may spend (tokens, USD)
   * before it pauses for a person to raise it. Not part of the definition hash. @defaultValue none
   */
  budget?: BudgetOption;
  /**
   * What a request may not exceed, where `budget` and `maxDurationMs` are only the defaults of a
   * request that names none: a create, fork or continue asking for more is refused (HTTP 400 naming
   * the cap), and a run that names none is held to the cap (a team's caps bound the team run's budget
   * and deadline, which its member runs share). Not part of the definition hash.
   * @defaultValue no caps
   */
  caps?: EntityCapsOption;
}

const ENTITY_NAME_PATTERN = /^[a-zA-Z0-9_.-]{1,64}$/;

/** Checks the fields agents and teams share; throws a UserError naming the bad one. */
function validateEntityOptions(kind: EntityKind, options: EntityOptions): void {
  if (typeof options.name === 'string' && options.name.includes(ENTITY_PATH_SEPARATOR)) {
    throw new UserError(
      `${kind} name ${JSON.stringify(options.name)} is invalid: "${ENTITY_PATH_SEPARATOR}" is reserved for member paths (a team's member runs are named "team${ENTITY_PATH_SEPARATOR}member")`,
    );
  }
  if (!ENTITY_NAME_PATTERN.test(options.name ?? '')) {
    throw new UserError(
      `${kind} name ${JSON.stringify(options.name)} is invalid: use 1-64 letters, digits, ".", "_" or "-"`,
    );
  }
  if (!options.model || typeof options.model.respond !== 'function') {
    throw new UserError(`${kind} "${options.name}": model must implement Model`);
  }
  if (
    options.checkpoint !== undefined &&
    !(CHECKPOINT_MODES as readonly string[]).includes(options.checkpoint)
  ) {
    throw new UserError(
      `${kind} "${options.name}": checkpoint must be one of ${CHECKPOINT_MODES.join(', ')}`,
    );
  }
  if (
    options.maxTurns !== undefined &&
    (!Number.isInteger(options.maxTurns) || options.maxTurns < 1)
  ) {
    throw new UserError(`${kind} "${options.name}": maxTurns must be a positive integer`);
  }
  if (
    options.version !== undefined &&
    (typeof options.version !== 'string' || options.version.trim() === '')
  ) {
    throw new UserError(`${kind} "${options.name}": version must be a non-empty string`);
  }
  if (
    options.onDefinitionChange !== undefined &&
    !(DEFINITION_CHANGE_POLICIES as readonly string[]).includes(options.onDefinitionChange)
  ) {
    throw new UserError(
      `${kind} "${options.name}": onDefinitionChange must be one of ${DEFINITION_CHANGE_POLICIES.join(', ')}`,
    );
  }
  if (options.maxDurationMs !== undefined && !isDeadlineMs(options.maxDurationMs)) {
    throw new UserError(
      `${kind} "${options.name}": maxDurationMs must be a positive integer number of milliseconds, at most ${MAX_DEADLINE_MS} (365 days)`,
    );
  }
}

/**
 * What agents and teams share, resolved from their {@link EntityOptions}
 * (checked, defaults applied) in one place: an {@link Agent} or a
 * {@link Team} adds only what is its own.
 */
export abstract class Entity<Output = unknown> {
  abstract readonly kind: EntityKind;
  readonly name: string;
  readonly role: string;
  readonly model: Model;
  /** The entity model's own tools (a team's are offered beside `delegate_task_to_member`). */
  readonly tools: readonly Tool[];
  readonly instructions: string;
  readonly checkpoint: CheckpointMode;
  readonly maxTurns: number;
  readonly outputType: z.ZodType<Output> | undefined;
  readonly version: string | undefined;
  readonly onDefinitionChange: DefinitionChangePolicy;
  /** The deadline of its runs created without one, in ms from creation; undefined: none. */
  readonly maxDurationMs: number | undefined;
  /** The budget of its runs created without one (a team's covers its member runs); undefined: none. */
  readonly budget: Budget | undefined;
  /** What a request may not exceed (a budget, a deadline); undefined: none. */
  readonly caps: EntityCaps | undefined;

  protected constructor(kind: EntityKind, options: EntityOptions<Output>) {
    validateEntityOptions(kind, options);
    const owner = `${kind} "${options.name}"`;
    const tools = options.tools ?? [];
    assertUniqueToolNames(owner, tools);
    this.name = options.name;
    this.role = options.role ?? '';
    this.model = options.model;
    this.tools = tools;
    this.instructions = options.instructions ?? '';
    this.checkpoint = options.checkpoint ?? DEFAULT_CHECKPOINT_MODE;
    this.maxTurns = options.maxTurns ?? DEFAULT_MAX_TURNS;
    this.outputType = options.outputType;
    this.version = options.version;
    this.onDefinitionChange = options.onDefinitionChange ?? 'error';
    this.maxDurationMs = options.maxDurationMs;
    this.budget = budgetOf(options.budget, `${owner}: budget`);
    this.caps = capsOf(options.caps, owner, this);
  }
}
