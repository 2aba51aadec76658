import type { EngineResources } from '../engine-resources.js';
import { UserError } from '../errors.js';
import type { RunRecord } from '../run-types.js';
import type { ContinueDecision } from './continue-rules.js';

/**
 * Forks a COMPLETED run: a new run (PENDING) in the same session holding the
 * source's messages and the new input, on the entity's current definition
 * (with a deadline of `deadlineMs`, else its `maxDurationMs`, from now),
 * its metadata saying `forked_from`; the source is left as it is.
 */
export async function forkRun(
  resources: EngineResources,
  source: RunRecord,
  input: string | undefined,
  deadlineMs?: number,
): Promise<ContinueDecision> {
  if (!input?.trim()) throw new UserError('input is required to fork a completed run');
  const { store, catalog } = resources;
  const { messages } = await store.loadHistory(source.runId);
  const entity = await catalog.describe(source.entity);
  // A fork is a new run: its deadline counts from its creation, by default its entity's maxDurationMs.
  const forkDeadlineMs = deadlineMs ?? entity?.maxDurationMs ?? undefined;
  const forked = await store.createRun({
    entity: source.entity,
    input,
    sessionId: source.sessionId,
    tenantId: source.tenantId,
    priority: source.priority,
    userId: source.userId,
    checkpoint: source.checkpoint,
    // A fork is a new run: it starts on the entity's current definition.
    definitionHash: entity?.definitionHash ?? null,
    ...(forkDeadlineMs !== undefined && { deadlineMs: forkDeadlineMs }),
    metadata: { ...source.metadata, forked_from: source.runId },
    messages: [...messages, { role: 'user', content: input }],
  });
  return { action: 'fork', run: forked };
}
