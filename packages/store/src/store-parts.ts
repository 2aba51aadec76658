import type {
  CancelStore,
  CheckpointStore,
  DecisionStore,
  RecoveryStore,
} from '@cairn/engine/store';
import type { PostgresCheckpointStore } from './postgres-checkpoint-store.js';

/**
 * The fenced writes a worker runs a pickup on: the engine's `CheckpointStore`
 * (claim, checkpoint commit, finish, member runs) and the cancel primitives.
 */
export type StoreWrites = CheckpointStore &
  CancelStore &
  Pick<PostgresCheckpointStore, 'appendEvent' | 'appendEvents'>;

/** The read models the HTTP API and the run pages show: a run's view, run lists, messages, events and sessions. */
export type StoreReads = Pick<
  PostgresCheckpointStore,
  | 'getRun'
  | 'getRunView'
  | 'listRuns'
  | 'listRunMessages'
  | 'getSessionView'
  | 'listEvents'
  | 'listEventsOfTypes'
  | 'readRunTreeEvents'
  | 'countRunsByStatus'
>;

/** The human-in-the-loop primitives: decide, consume and expire a paused run's actions. */
export type StoreHitl = DecisionStore &
  Pick<PostgresCheckpointStore, 'listRunActions' | 'consumeAction'>;

/** The operations the apps run beside runs: recovery reads, advisory locks, retention, session deletion, readiness and sign-outs. */
export type StoreOps = RecoveryStore &
  Pick<
    PostgresCheckpointStore,
    'withAdvisoryLock' | 'pruneFinishedRuns' | 'deleteSession' | 'ping' | 'browserSessions'
  >;
