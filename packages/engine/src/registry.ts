import type { Agent } from './agent.js';
import { definitionHashOf } from './definition-hash.js';
import type { EntityCatalog, EntityInfo } from './entity-catalog.js';
import { EntityNotFoundError, UserError } from './errors.js';
import type { EntityRef } from './run-types.js';
import type { Team } from './team.js';

/** An agent or a team. */
export type Entity = Agent | Team;

/** Marks registries across copies of this package (two bundles, two installs): `instanceof` would not. */
const REGISTRY_BRAND = Symbol.for('cairn.registry');

/** The agents and teams a worker can run, found by kind and name. Jobs name entities; they never carry code. */
export class Registry implements EntityCatalog {
  readonly [REGISTRY_BRAND] = true;
  private readonly agents = new Map<string, Agent>();
  private readonly teams = new Map<string, Team>();

  constructor(entities: { agents?: Agent[]; teams?: Team[] }) {
    for (const team of entities.teams ?? []) this.addTeam(team);
    for (const agent of entities.agents ?? []) this.addAgent(agent);
  }

  /** True for a registry made by any copy of `@cairn/engine` (a brand, not `instanceof`). */
  static isRegistry(value: unknown): value is Registry {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[REGISTRY_BRAND] === true;
  }

  /** A team and, through its members, every agent and team under it (a team member runs as an entity of its own). */
  private addTeam(team: Team): void {
    const existing = this.teams.get(team.name);
    if (existing && existing !== team) throw new UserError(`registry: two different teams are named "${team.name}"`);
    if (existing) return;
    this.teams.set(team.name, team);
    for (const member of team.members) {
      if (member.kind === 'team') this.addTeam(member);
      else this.addAgent(member);
    }
  }

  private addAgent(agent: Agent): void {
    const existing = this.agents.get(agent.name);
    if (existing && existing !== agent) {
      throw new UserError(`registry: two different agents are named "${agent.name}"`);
    }
    this.agents.set(agent.name, agent);
  }

  /** The entity `ref` names; throws {@link EntityNotFoundError}. */
  get(ref: EntityRef): Entity {
    const entity = ref.kind === 'team' ? this.teams.get(ref.name) : this.agents.get(ref.name);
    if (!entity) throw new EntityNotFoundError(ref.kind, ref.name);
    return entity;
  }

  /** True when the registry holds `ref`. */
  has(ref: EntityRef): boolean {
    return (ref.kind === 'team' ? this.teams : this.agents).has(ref.name);
  }

  /** What run creation needs of `ref`, or undefined when the registry does not hold it. */
  describe(ref: EntityRef): EntityInfo | undefined {
    if (!this.has(ref)) return undefined;
    const entity = this.get(ref);
    return { kind: ref.kind, name: ref.name, checkpoint: entity.checkpoint, definitionHash: definitionHashOf(entity) };
  }

  /** {@link Registry.describe} of every entity: what a worker records of the entities it serves. */
  describeAll(): EntityInfo[] {
    return this.list().map((ref) => this.describe(ref)!);
  }

  /** Every entity, for listings. */
  list(): EntityRef[] {
    return [
      ...[...this.agents.keys()].map((name) => ({ kind: 'agent' as const, name })),
      ...[...this.teams.keys()].map((name) => ({ kind: 'team' as const, name })),
    ];
  }
}
