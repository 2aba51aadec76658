import type { Claim } from '../checkpoint-store.js';
import type { EngineResources } from '../engine-resources.js';
import type { ExecuteOptions } from './execute-options.js';

/**
 * The claim that starts an execution: one fenced move to RUNNING from one of
 * `options.from` (the store's default: `CLAIMABLE_STATUSES`), recording this
 * worker, the reason, the definition it runs on and, for a member run, the
 * team epoch it must still hold. Throws what the store throws: a claim that
 * lost a race (`RunNotContinuableError`, `LeaseLostError` for a member).
 */
export function claimExecution(
  resources: EngineResources,
  runId: string,
  options: ExecuteOptions,
): Promise<Claim> {
  return resources.store.claimRun(runId, {
    workerId: resources.workerId,
    reason: options.reason,
    ...(options.parentEpoch === undefined ? {} : { parentEpoch: options.parentEpoch }),
    ...(options.from === undefined ? {} : { from: options.from }),
    ...(options.definition === undefined ? {} : { definitionHash: options.definition.hash }),
  });
}
