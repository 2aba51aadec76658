import { randomUUID } from 'node:crypto';
import type { Message } from '../messages.js';
import {
  suspendedAction,
  suspendedEventData,
  type SuspendReason,
  type SuspendSwitch,
} from '../suspension.js';
import type { Checkpointer } from './checkpointer.js';
import { PauseSignal } from './pause-signal.js';

/** What a suspend of one execution reads of it. */
export interface SuspendTarget {
  runId: string;
  epoch: number;
  checkpointer: Pick<Checkpointer, 'pause'>;
  memberPath(): Promise<string[]>;
}

/**
 * Puts the `suspended` action the run will wait on into the execution's PAUSED
 * finish, and returns the signal that ends the execution with it (its finish
 * stores `RunSuspended`).
 */
export async function suspendSignal(
  target: SuspendTarget,
  batch: number,
  reason: SuspendReason,
  now = false,
): Promise<PauseSignal> {
  const action = suspendedAction(
    `act_${randomUUID()}`,
    await target.memberPath(),
    target.epoch,
    batch,
    reason,
    now,
  );
  target.checkpointer.pause([action]);
  return new PauseSignal(target.runId, suspendedEventData(action), 'RunSuspended');
}

/**
 * A checkpoint boundary (before a model turn, after the batch before it
 * committed): when the tree's suspend request names this run, the execution
 * stops here, PAUSED with a `suspended` action (thrown as a {@link PauseSignal}).
 */
export async function pauseIfSuspended(
  state: SuspendTarget & { suspend?: SuspendSwitch },
  batch: number,
): Promise<void> {
  const request = state.suspend?.requestFor(state.runId);
  if (!request) return;
  throw await suspendSignal(state, batch, 'operator', request.now);
}

/** The tool batches of a history: the batch a new action belongs to. */
export function batchesOf(messages: readonly Message[]): number {
  return messages.filter((m) => m.role === 'assistant' && (m.toolCalls?.length ?? 0) > 0).length;
}
