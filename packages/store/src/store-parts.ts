import type {
  CancelStore,
  CheckpointStore,
  DecisionStore,
  RecoveryPort,
  SuspendStore,
} from '@cairn/engine/store';
import type { PostgresCheckpointStore } from './postgres-checkpoint-store.js';

/**
 * What a worker's executions run on: the engine's `CheckpointStore` (claim,
 * checkpoint commit, finish, member runs), the cancel primitives, a pickup's
 * expiry of an action, the attempts a tracer reads, and event appends.
 */
export type StoreWrites = CheckpointStore &
  CancelStore &
  Pick<DecisionStore, 'expireAction' | 'listPendingActions'> &
  Pick<PostgresCheckpointStore, 'appendEvent' | 'appendEvents' | 'getRunView'>;

/** The read models the HTTP API and the run pages show: a run's view, run lists, messages, events, sessions and the fleet. */
export type StoreReads = Pick<
  PostgresCheckpointStore,
  | 'getRun'
  | 'getRunView'
  | 'listRuns'
  | 'listRunMessages'
  | 'listChildRuns'
  | 'getSessionView'
  | 'listEvents'
  | 'listEventsOfTypes'
  | 'readRunTreeEvents'
  | 'readFleetOverview'
  | 'countRunsByStatus'
>;

/** The human-in-the-loop primitives: decide, consume and expire a paused run's actions; suspend and resume a run. */
export type StoreHitl = DecisionStore &
  SuspendStore &
  Pick<PostgresCheckpointStore, 'listRunActions' | 'consumeAction'>;

/**
 * The operations the apps run beside runs: the reconciler's recovery port,
 * retention, the search's chunks, session deletion, readiness, sign-outs, the PostgreSQL
 * backend's model limiter and a parked run's job delayed again before its claim.
 */
export type StoreOps = RecoveryPort &
  Pick<
    PostgresCheckpointStore,
    | 'pruneFinishedRuns'
    | 'closeSearchChunks'
    | 'deleteSession'
    | 'ping'
    | 'browserSessions'
    | 'modelCapacity'
    | 'recordParkedAgain'
  >;

/** The store as its parts (`openStore`): each consumer takes the one it uses. */
export interface StoreParts {
  writes: StoreWrites;
  reads: StoreReads;
  hitl: StoreHitl;
  ops: StoreOps;
}
