import type { EngineResources } from '../engine-resources.js';
import type { EntityInfo } from '../entity-catalog.js';
import type { PostedDecision } from '../hitl/pending-action.js';
import { validateDecision, type Decider } from '../hitl/validate-decision.js';
import type { DecisionValidator } from '../run-control-store.js';

/**
 * How decisions posted on `runId`'s tree by `decider`'s key are validated
 * before the store records them (`decideAndResume`): `validateDecision` for
 * that decider, so a tenant key may not decide its tenant's spent day, nor
 * raise a budget past the caps its tree's root entity has now (read only
 * when the decisions raise a budget and the key is a tenant's).
 */
export async function decisionValidatorFor(
  resources: Pick<EngineResources, 'store' | 'catalog'>,
  runId: string,
  decisions: readonly PostedDecision[],
  decider: Pick<Decider, 'tenantId'>,
): Promise<DecisionValidator> {
  const raises = decisions.some((d) => d.decision.type === 'approve' && d.decision.budget);
  const rootEntity =
    decider.tenantId !== null && raises ? await rootEntityOf(resources, runId) : undefined;
  const full: Decider = { tenantId: decider.tenantId, ...(rootEntity && { rootEntity }) };
  return (action, decision) => validateDecision(action, decision, full);
}

/** The entity of the root of `runId`'s tree as the catalog describes it now; undefined for a run or an entity it does not know. */
async function rootEntityOf(
  { store, catalog }: Pick<EngineResources, 'store' | 'catalog'>,
  runId: string,
): Promise<EntityInfo | undefined> {
  let run = await store.getRun(runId);
  while (run?.parentRunId) run = await store.getRun(run.parentRunId);
  return run && (await catalog.describe(run.entity));
}
