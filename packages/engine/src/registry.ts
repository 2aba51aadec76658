import type { Agent } from './agent.js';
import { EntityNotFoundError, UserError } from './errors.js';
import type { EntityRef } from './run-types.js';
import type { Team } from './team.js';

/** An agent or a team. */
export type Entity = Agent | Team;

/** The agents and teams a worker can run, found by kind and name. Jobs name entities; they never carry code. */
export class Registry {
  private readonly agents = new Map<string, Agent>();
  private readonly teams = new Map<string, Team>();

  constructor(entities: { agents?: Agent[]; teams?: Team[] }) {
    for (const team of entities.teams ?? []) {
      if (this.teams.has(team.name)) throw new UserError(`registry: duplicate team "${team.name}"`);
      this.teams.set(team.name, team);
      for (const member of team.members) this.addAgent(member);
    }
    for (const agent of entities.agents ?? []) this.addAgent(agent);
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

  /** Every entity, for listings. */
  list(): EntityRef[] {
    return [
      ...[...this.agents.keys()].map((name) => ({ kind: 'agent' as const, name })),
      ...[...this.teams.keys()].map((name) => ({ kind: 'team' as const, name })),
    ];
  }
}
