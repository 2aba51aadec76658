/**
 * How a member is named: by its path from the run's root entity, its team's
 * name, then its own, joined by {@link ENTITY_PATH_SEPARATOR}
 * (`research-team/researcher`, `outer/inner/researcher`), so two teams can
 * each have a member called `researcher`. Entity names never contain the
 * separator.
 */
export const ENTITY_PATH_SEPARATOR = '/';

/** The entity name of `memberName`'s runs when `teamName` (a plain name or a path) delegates to it. */
export function memberEntityName(teamName: string, memberName: string): string {
  return joinEntityPath([teamName, memberName]);
}

/** The entity name along `segments`: `research-team/researcher` for `['research-team', 'researcher']`. */
export function joinEntityPath(segments: readonly string[]): string {
  return segments.join(ENTITY_PATH_SEPARATOR);
}

/** The names along an entity name: `['research-team', 'researcher']` for `research-team/researcher`. */
export function entityPathSegments(name: string): string[] {
  return name.split(ENTITY_PATH_SEPARATOR);
}

/** True for a member's path (as opposed to a plain name). */
export function isEntityPath(name: string): boolean {
  return name.includes(ENTITY_PATH_SEPARATOR);
}

/** The entity's own name, the last of its path: `researcher` for `research-team/researcher`. */
export function ownEntityName(name: string): string {
  return entityPathSegments(name).at(-1)!;
}

/**
 * The entity names from the root run down to a run named `name`, given its
 * parent run's path (undefined for a root run): a member run's name is its
 * path already; a member run stored before members were named by path (a
 * plain name under a parent run) gets its parent's path and its own name.
 */
export function runEntityPath(name: string, parentPath: readonly string[] | undefined): string[] {
  if (isEntityPath(name) || parentPath === undefined) return entityPathSegments(name);
  return [...parentPath, name];
}
