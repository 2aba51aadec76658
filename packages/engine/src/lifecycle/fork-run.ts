import { assertDeadlineMs } from '../deadline-ms.js';
import { newRunLimits } from '../entity-caps.js';
import type { EngineResources } from '../engine-resources.js';
import { RunNotContinuableError, RunNotFoundError, UserError } from '../errors.js';
import type { Message } from '../messages.js';
import type { CreatedRun, ForkedFrom, RunRecord } from '../run-types.js';
import type { RunStatus } from './run-status.js';
import { assertTenantCreates, idempotencyOf } from './create-run.js';

/** Where a fork starts: a checkpoint by its number, or the message index one ends at. */
export type ForkAt = { checkpoint: number } | { messageIndex: number };

/** What `forkRun` takes (`POST /v1/runs/:run_id/fork`). */
export interface ForkRequest {
  /** The point of the source's history the fork starts from. @defaultValue its last checkpoint */
  at?: ForkAt;
  /** A user message appended after the point. Required where the history ends with the run's answer. */
  input?: string;
  /** @defaultValue the source's metadata */
  metadata?: Record<string, unknown>;
  /** The session the fork joins (the source's tenant's). @defaultValue the source's session */
  sessionId?: string;
  /** The fork must end within this many ms of its creation, not above its entity's `caps.maxDurationMs`. @defaultValue its entity's `maxDurationMs`, else its cap */
  deadlineMs?: number;
  /** Makes the fork idempotent: the same key with the same request returns the fork it created. */
  idempotencyKey?: string;
}

/** A fork point the source does not have, or that cannot take the request: a 422 naming the field. */
export class InvalidForkPointError extends UserError {}

/** How many messages before a point are read to see whether it ends inside a tool batch. */
const TAIL_MESSAGES = 64;

/**
 * The `fork` move (docs/forks-and-replay.md "Forks: time travel at a checkpoint"): a new run (PENDING) of
 * the source's entity, on its current definition, whose history is the
 * source's up to a checkpoint (shared, not copied: the fork writes only its
 * own input) followed by `input`. The source is untouched; tool calls before
 * the point never run again (their results are in the history); calls of a
 * batch the point cuts through, delegations included, run again in the fork.
 * Any status but PENDING (`RunNotContinuableError`); a member run is forked
 * through its team. Throws {@link InvalidForkPointError} for a point the run
 * does not have, `CapExceededError` for a deadline above its entity's
 * `caps.maxDurationMs`, `TenantBudgetExhaustedError` when the source's tenant
 * has spent its day, and `RunNotFoundError`. The calls the point cuts through
 * run under the fork's idempotency keys, not the source's.
 */
export async function forkRun(
  resources: EngineResources,
  sourceId: string,
  request: ForkRequest = {},
): Promise<CreatedRun & { forkedFrom: ForkedFrom }> {
  assertDeadlineMs('deadlineMs', request.deadlineMs);
  const { store, catalog } = resources;
  const source = await store.getRun(sourceId);
  if (!source) throw new RunNotFoundError(sourceId);
  assertForkable(source);
  const entity = await catalog.describe(source.entity);
  // A fork is a new run: its deadline counts from its creation, by default its entity's
  // maxDurationMs; its budget is its entity's default; both within the entity's caps.
  const { deadlineMs, budget } = entity
    ? newRunLimits(entity, {
        ...(request.deadlineMs !== undefined && { deadlineMs: request.deadlineMs }),
      })
    : { deadlineMs: request.deadlineMs, budget: undefined };
  const point = await resolvePoint(resources, source, request.at);
  const input = request.input?.trim() ? request.input : undefined;
  await assertPointTakes(resources, source, point.messageIndex, input, request.at);

  await assertTenantCreates(resources, source.tenantId);
  const forkedFrom: ForkedFrom = {
    run_id: source.runId,
    checkpoint: point.checkpoint,
    message_index: point.messageIndex,
  };
  const messages: Message[] = input === undefined ? [] : [{ role: 'user', content: input }];
  const created = await store.createRun({
    entity: source.entity,
    input: input ?? source.input,
    sessionId: request.sessionId ?? source.sessionId,
    tenantId: source.tenantId,
    priority: source.priority,
    userId: source.userId,
    checkpoint: source.checkpoint,
    // A fork is a new run: it starts on the entity's current definition.
    definitionHash: entity?.definitionHash ?? null,
    ...(budget !== undefined && { budget }),
    ...(deadlineMs !== undefined && { deadlineMs }),
    metadata: request.metadata ?? source.metadata,
    sharedHistory: { runId: source.runId, length: point.messageIndex },
    forkedFrom,
    messages,
    ...idempotencyOf(source.tenantId, request.idempotencyKey, {
      fork: source.runId,
      ...request,
      idempotencyKey: null,
    }),
  });
  // A repeated request gets the fork it made, with the point it was made at.
  return { ...created, forkedFrom: created.forkedFrom ?? forkedFrom };
}

/**
 * Why a run may not be forked, or null when it may: `not-started` (PENDING: it has no
 * checkpoint of its own yet) or `member` (a member run is forked through its team, whose
 * history holds the member's result). The one rule of the `fork` move and the run page's
 * "Fork from here".
 */
export function forkRefusalOf(
  status: RunStatus,
  parentRunId: string | null,
): 'not-started' | 'member' | null {
  if (status === 'PENDING') return 'not-started';
  if (parentRunId !== null) return 'member';
  return null;
}

function assertForkable(source: RunRecord): void {
  const refusal = forkRefusalOf(source.status, source.parentRunId);
  if (refusal === 'not-started')
    throw new RunNotContinuableError(
      source.runId,
      source.status,
      'it has no checkpoint of its own yet: fork it once a worker has taken it',
    );
  if (refusal === 'member')
    throw new InvalidForkPointError(
      `run ${source.runId} is a member run: fork its team run ${source.parentRunId}, whose history holds this member's result`,
    );
}

/** The point `at` names, checked against the source's committed checkpoints. */
async function resolvePoint(
  { store }: EngineResources,
  source: RunRecord,
  at: ForkAt | undefined,
): Promise<{ checkpoint: number; messageIndex: number }> {
  if (at !== undefined && 'checkpoint' in at) {
    const checkpoints = await store.listCheckpoints(source.runId);
    const found = checkpoints[at.checkpoint - 1];
    if (!Number.isInteger(at.checkpoint) || !found)
      throw new InvalidForkPointError(
        `at.checkpoint: run ${source.runId} has checkpoints 1 to ${checkpoints.length}, not ${String(at.checkpoint)}`,
      );
    return { checkpoint: found.seq, messageIndex: found.messageIndex };
  }
  const messageIndex = at?.messageIndex ?? source.lastCheckpointAtMessageIndex;
  const checkpoint = await store.checkpointEndingAt(source.runId, messageIndex);
  if (checkpoint === undefined) {
    const ends = (await store.listCheckpoints(source.runId)).map((c) => c.messageIndex);
    throw new InvalidForkPointError(
      `at.message_index: no checkpoint of run ${source.runId} ends at message ${String(messageIndex)} (its checkpoints end at ${ends.join(', ')})`,
    );
  }
  return { checkpoint, messageIndex };
}

/**
 * Refuses an `input` the history at `messageIndex` cannot take: inside a
 * tool batch (a user message cannot come between a turn's calls and their
 * results; fork there without input and the batch's open calls run first),
 * and requires one where the history ends with the run's answer (a
 * `UserError`, a 400: the point is fine, the request lacks its input).
 */
async function assertPointTakes(
  { store }: EngineResources,
  source: RunRecord,
  messageIndex: number,
  input: string | undefined,
  at: ForkAt | undefined,
): Promise<void> {
  const field =
    at === undefined ? 'input' : 'checkpoint' in at ? 'at.checkpoint' : 'at.message_index';
  const tail = await store.readHistory(source.runId, {
    from: Math.max(0, messageIndex - TAIL_MESSAGES),
    to: messageIndex,
  });
  const last = tail.at(-1);
  const answered = last?.role === 'assistant' && (last.toolCalls?.length ?? 0) === 0;
  if (answered && input === undefined)
    throw new UserError(
      `input is required: the history of run ${source.runId} at message ${messageIndex} ends with its answer`,
    );
  if (input !== undefined && (await endsInsideBatch(store, source.runId, tail, messageIndex)))
    throw new InvalidForkPointError(
      `${field}: message ${messageIndex} of run ${source.runId} is inside a tool batch (calls without results); fork there without input, or at a checkpoint between batches`,
    );
}

/** True when the history before `messageIndex` ends with a tool-call turn some of whose calls have no result. */
async function endsInsideBatch(
  store: EngineResources['store'],
  runId: string,
  tail: Message[],
  messageIndex: number,
): Promise<boolean> {
  let messages = tail;
  let turn = messages.findLastIndex((m) => m.role !== 'tool');
  // A batch longer than the tail: read the whole history before the point.
  if (turn < 0 && messages.length < messageIndex) {
    messages = await store.readHistory(runId, { from: 0, to: messageIndex });
    turn = messages.findLastIndex((m) => m.role !== 'tool');
  }
  const call = messages[turn];
  if (call?.role !== 'assistant' || !call.toolCalls?.length) return false;
  return messages.length - turn - 1 < call.toolCalls.length;
}
