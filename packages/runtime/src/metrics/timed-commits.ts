import type { CheckpointStore } from '@cairn/engine/store';

/** The store methods that commit a run's progress. */
type CommitMethods = Pick<CheckpointStore, 'commitCheckpoint' | 'finishRun'>;

/** One successful commit of a run (checkpoint or finish): when it started and ended, in ms since the epoch. */
export interface TimedCommit {
  runId: string;
  startTime: number;
  endTime: number;
}

/** The same store, reporting every successful commit (checkpoint or finish) with its timing. */
export function timeCommits<S extends CommitMethods>(
  store: S,
  onCommit: (commit: TimedCommit) => void,
): S {
  const timed =
    <A extends [string, ...unknown[]], R>(commit: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      const startTime = performance.timeOrigin + performance.now();
      const result = await commit(...args);
      onCommit({ runId: args[0], startTime, endTime: performance.timeOrigin + performance.now() });
      return result;
    };
  const commitCheckpoint = timed(store.commitCheckpoint.bind(store));
  const finishRun = timed(store.finishRun.bind(store));
  return new Proxy(store, {
    get(target, property, receiver) {
      if (property === 'commitCheckpoint') return commitCheckpoint;
      if (property === 'finishRun') return finishRun;
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === 'function'
        ? (value as (...args: unknown[]) => unknown).bind(target)
        : value;
    },
  });
}
