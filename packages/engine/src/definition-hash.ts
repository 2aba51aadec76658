import type { Agent } from './agent.js';
import { canonicalDigest } from './canonical-digest.js';
import type { Team } from './team.js';
import type { Tool } from './tool.js';

/** Hex digits of a definition hash: 64 bits, short enough to read in a log line, far from colliding among one entity's versions. */
export const DEFINITION_HASH_LENGTH = 16;

const cache = new WeakMap<Agent | Team, string>();

/**
 * The digest of an entity's definition, as docs/agents-and-teams.md lists it ("Definition
 * changes and in-flight runs"): kind, name,
 * role and instructions (the system prompt), model id (`Model.name`), tool
 * names and the JSON Schemas of their parameters, members (each by its own
 * hash, so a changed member changes its team), checkpoint mode and
 * `version`. Canonical JSON (object keys sorted) through SHA-256, first
 * {@link DEFINITION_HASH_LENGTH} hex digits: the same in every process.
 * Tool descriptions and code, `maxTurns`, `maxDurationMs`, `outputType` and
 * `onDefinitionChange` are not part of it. Computed once per entity object.
 */
export function definitionHashOf(entity: Agent | Team): string {
  const known = cache.get(entity);
  if (known !== undefined) return known;
  const hash = canonicalDigest(definitionOf(entity)).slice(0, DEFINITION_HASH_LENGTH);
  cache.set(entity, hash);
  return hash;
}

/** The hashed fields of an entity, as plain data. */
function definitionOf(entity: Agent | Team): Record<string, unknown> {
  return {
    kind: entity.kind,
    name: entity.name,
    role: entity.role,
    instructions: entity.instructions,
    model: entity.model.name,
    tools: toolsOf(entity.tools),
    ...(entity.kind === 'team' && {
      members: Object.fromEntries(
        entity.members.map((member) => [member.name, definitionHashOf(member)]),
      ),
    }),
    checkpoint: entity.checkpoint,
    version: entity.version ?? null,
  };
}

/** Tools by name, each with the JSON Schema of its parameters; their order is not part of the definition. */
function toolsOf(tools: readonly Tool[]): Record<string, unknown> {
  return Object.fromEntries(tools.map((t) => [t.name, t.spec.parameters]));
}
