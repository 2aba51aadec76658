import type { CheckpointMode, EntityKind, EntityRef } from './run-types.js';

/** What creating a run needs to know of an entity, without its code: that it exists, and its default checkpoint mode. */
export interface EntityInfo {
  kind: EntityKind;
  name: string;
  /** The checkpoint mode of a run that names none. */
  checkpoint: CheckpointMode;
}

/**
 * Where run creation looks entities up. A {@link Registry} is one (it holds
 * the code); the producer uses the entities workers recorded in the store,
 * so it never loads tool code or model keys.
 */
export interface EntityCatalog {
  /** The entity `ref` names, or undefined when there is none. */
  describe(ref: EntityRef): EntityInfo | undefined | Promise<EntityInfo | undefined>;
}
