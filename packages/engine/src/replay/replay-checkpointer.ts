import type { CheckpointStore } from '../checkpoint-store.js';
import type { CheckpointMode } from '../run-types.js';
import { Checkpointer } from '../runner/checkpointer.js';

/**
 * A checkpointer for a replay: the turn loop checkpoints as it would in the
 * stored run's mode, and nothing is written anywhere.
 */
export function replayCheckpointer(runId: string, mode: CheckpointMode): Checkpointer {
  let committed = 0;
  const discarding: Pick<CheckpointStore, 'commitCheckpoint' | 'finishRun'> = {
    commitCheckpoint: (_runId, _epoch, delta) =>
      Promise.resolve((committed += delta.messages.length)),
    finishRun: () => Promise.reject(new Error('a replay finishes no run')),
  };
  return new Checkpointer(discarding, runId, 0, mode, 0);
}
