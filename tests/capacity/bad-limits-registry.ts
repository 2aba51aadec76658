/**
 * The research team with a `modelLimits` export whose second entry is
 * malformed: a worker loading it must refuse to start, naming the entry.
 */
import { createRegistry as researchTeam } from '@cairn/research-team';

/** @public A registry module's limits, in `CAIRN_MODEL_LIMITS`'s shape. */
export const modelLimits = [
  { model: 'scripted', concurrency: 4 },
  { model: 'openai-chat:*', requests_per_minute: -60 },
];

/** @public The research team, unchanged. */
export const createRegistry = researchTeam;
