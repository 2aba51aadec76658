import type { Agent } from './agent.js';
import { definitionHashOf } from './definition-hash.js';
import type { EntityCatalog, EntityInfo } from './entity-catalog.js';
import { entityPathSegments, joinEntityPath, memberEntityName } from './entity-path.js';
import { AmbiguousEntityError, EntityNotFoundError, UserError } from './errors.js';
import type { EntityKind, EntityRef } from './run-types.js';
import type { Team } from './team.js';

/** An agent or a team. */
export type Entity = Agent | Team;

/** Marks registries across copies of this package (two bundles, two installs): `instanceof` would not. */
const REGISTRY_BRAND = Symbol.for('cairn.registry');

/** A member entity at one place of a team tree. */
interface Placement {
  entity: Entity;
  /** Its path from the top-level entity, e.g. `research-team/researcher`. */
  path: string;
}

const keyOf = (kind: EntityKind, name: string) => `${kind}:${name}`;

/**
 * The agents and teams a worker can run, found by kind and name. Jobs name
 * entities; they never carry code.
 *
 * Top-level entities (those given to the constructor) keep their plain names,
 * unique per kind. A member is named by its path from a top-level entity
 * (`research-team/researcher`, `outer/inner/researcher`), so two teams can
 * each have their own `researcher`. A member's plain name (`researcher`)
 * names it too while no different member shares it; a shared one is
 * ambiguous and names nothing (an {@link AmbiguousEntityError} lists the
 * paths to use).
 */
export class Registry implements EntityCatalog {
  readonly [REGISTRY_BRAND] = true;
  /** Every entity by kind and path from a top-level entity (a top-level entity's path is its name). */
  private readonly byPath = new Map<string, Entity>();
  /** Member entities by kind and plain name, with where they sit. */
  private readonly placements = new Map<string, Placement[]>();

  constructor(entities: { agents?: Agent[]; teams?: Team[] }) {
    const topLevel = [...(entities.teams ?? []), ...(entities.agents ?? [])];
    for (const entity of topLevel) {
      const existing = this.byPath.get(keyOf(entity.kind, entity.name));
      if (existing && existing !== entity) {
        throw new UserError(`registry: two different ${entity.kind}s are named "${entity.name}"`);
      }
      this.byPath.set(keyOf(entity.kind, entity.name), entity);
    }
    for (const entity of new Set(topLevel))
      if (entity.kind === 'team') this.addMembers(entity, entity.name);
  }

  /** True for a registry made by any copy of `@cairn/engine` (a brand, not `instanceof`). */
  static isRegistry(value: unknown): value is Registry {
    return (
      typeof value === 'object' &&
      value !== null &&
      (value as Record<symbol, unknown>)[REGISTRY_BRAND] === true
    );
  }

  /** Every member under `team` (at `path`), recursively: a team member runs as an entity of its own. */
  private addMembers(team: Team, path: string): void {
    for (const member of team.members) {
      const memberPath = memberEntityName(path, member.name);
      this.byPath.set(keyOf(member.kind, memberPath), member);
      const key = keyOf(member.kind, member.name);
      this.placements.set(key, [
        ...(this.placements.get(key) ?? []),
        { entity: member, path: memberPath },
      ]);
      if (member.kind === 'team') this.addMembers(member, memberPath);
    }
  }

  /**
   * The entity `ref` names: a top-level name or a path from it, else a
   * member's plain name (or a path starting at one) when it names one entity
   * only; an ambiguous error when it names several.
   */
  private resolve(ref: EntityRef): Entity | AmbiguousEntityError | undefined {
    const exact = this.byPath.get(keyOf(ref.kind, ref.name));
    if (exact) return exact;
    const [first = '', ...rest] = entityPathSegments(ref.name);
    const found: Placement[] = [];
    for (const start of this.placements.get(keyOf(rest.length > 0 ? 'team' : ref.kind, first)) ??
      []) {
      const path = joinEntityPath([start.path, ...rest]);
      const entity = this.byPath.get(keyOf(ref.kind, path));
      if (entity) found.push({ entity, path });
    }
    const distinct = new Set(found.map((f) => f.entity));
    if (distinct.size > 1)
      return new AmbiguousEntityError(
        ref.kind,
        ref.name,
        found.map((f) => f.path),
      );
    return found[0]?.entity;
  }

  /** The entity `ref` names; throws {@link EntityNotFoundError} ({@link AmbiguousEntityError} for a shared plain name). */
  get(ref: EntityRef): Entity {
    const entity = this.resolve(ref);
    if (!entity || entity instanceof AmbiguousEntityError) throw this.notFoundError(ref);
    return entity;
  }

  /** Why `ref` names no entity: an {@link AmbiguousEntityError} for a shared plain name, else an {@link EntityNotFoundError}. */
  notFoundError(ref: EntityRef): EntityNotFoundError {
    const entity = this.resolve(ref);
    return entity instanceof AmbiguousEntityError
      ? entity
      : new EntityNotFoundError(ref.kind, ref.name);
  }

  /** True when `ref` names exactly one entity of the registry. */
  has(ref: EntityRef): boolean {
    const entity = this.resolve(ref);
    return entity !== undefined && !(entity instanceof AmbiguousEntityError);
  }

  /** What run creation needs of `ref`, or undefined when the registry does not hold it; throws {@link AmbiguousEntityError}. */
  describe(ref: EntityRef): EntityInfo | undefined {
    const entity = this.resolve(ref);
    if (entity instanceof AmbiguousEntityError) throw entity;
    if (!entity) return undefined;
    return {
      kind: ref.kind,
      name: ref.name,
      checkpoint: entity.checkpoint,
      definitionHash: definitionHashOf(entity),
      ...(entity.maxDurationMs !== undefined && { maxDurationMs: entity.maxDurationMs }),
      ...(entity.budget !== undefined && { budget: entity.budget }),
      ...(entity.caps !== undefined && { caps: entity.caps }),
    };
  }

  /** {@link Registry.describe} of every entity: what a worker records of the entities it serves. */
  describeAll(): EntityInfo[] {
    return this.list().map((ref) => this.describe(ref)!);
  }

  /**
   * Every name that names one entity, for listings: top-level names, every
   * member's path, and the plain names of members no other member shares.
   */
  list(): EntityRef[] {
    const refs = [...this.byPath.entries()].map(([key, entity]) => ({
      kind: entity.kind,
      name: key.slice(entity.kind.length + 1),
    }));
    for (const [key, placements] of this.placements) {
      const { entity } = placements[0]!;
      if (this.byPath.has(key) || placements.some((p) => p.entity !== entity)) continue;
      refs.push({ kind: entity.kind, name: entity.name });
    }
    return refs;
  }
}
