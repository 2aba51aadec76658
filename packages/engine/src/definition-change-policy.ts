/** What a run's entity may do when a worker's definition of it differs from the run's (`onDefinitionChange`). */
export const DEFINITION_CHANGE_POLICIES = ['error', 'resume'] as const;
/** `error` (the default): leave the run for a worker with its definition, then end it in ERROR; `resume`: resume it on the new definition. */
export type DefinitionChangePolicy = (typeof DEFINITION_CHANGE_POLICIES)[number];
