import type { EntityCaps } from './entity-caps.js';
import type { Budget } from './spend/budget-option.js';
import type { CheckpointMode, EntityKind, EntityRef } from './run-types.js';

/** What creating a run needs to know of an entity, without its code: that it exists, its default checkpoint mode and deadline, and its definition hash. */
export interface EntityInfo {
  kind: EntityKind;
  name: string;
  /** The checkpoint mode of a run that names none. */
  checkpoint: CheckpointMode;
  /** The digest of its definition (`definitionHashOf`), stamped on the runs created of it; null when the catalog does not know it. */
  definitionHash: string | null;
  /** The deadline of a run that names none, in ms from its creation (its `maxDurationMs`); absent: none. */
  maxDurationMs?: number;
  /** The budget of a run that names none (its `budget` option, in micro-dollars); absent: none. */
  budget?: Budget;
  /** What a request may not exceed (its `caps`: a budget, a deadline); absent: none. */
  caps?: EntityCaps;
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
