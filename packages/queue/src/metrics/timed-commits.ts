import type { CheckpointStore } from '@cairn/engine/store';
import type { RunObserver } from './run-observation.js';

/** The store methods that commit a run's progress. */
type CommitMethods = Pick<CheckpointStore, 'commitCheckpoint' | 'finishRun'>;

/**
 * The same store, with every successful commit (checkpoint or finish) timed
 * and reported as a `checkpoint-commit` observation.
 */
export function timeCommits<S extends CommitMethods>(store: S, observe: RunObserver): S {
  const timed = <A extends unknown[], R>(commit: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      const startedAt = performance.now();
      const result = await commit(...args);
      observe({ kind: 'checkpoint-commit', seconds: (performance.now() - startedAt) / 1000 });
      return result;
    };
  const commitCheckpoint = timed(store.commitCheckpoint.bind(store));
  const finishRun = timed(store.finishRun.bind(store));
  return new Proxy(store, {
    get(target, property, receiver) {
      if (property === 'commitCheckpoint') return commitCheckpoint;
      if (property === 'finishRun') return finishRun;
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
