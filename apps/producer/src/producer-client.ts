import type {
  ContinueRequest,
  CreateRunRequest,
  CreatedRun,
  DecisionsResult,
  EntityRef,
  ForkedFrom,
  ForkRequest,
  PostedDecision,
  RunRecord,
  RunStatus,
} from '@cairn/engine';
import type { ResumeOutcome, SuspendOutcome } from '@cairn/engine/lifecycle';
import type {
  FleetOverview,
  RunListFilter,
  RunListPage,
  RunMessagesPage,
  RunView,
  RunViewOptions,
  SessionKey,
  SessionView,
  RunTreeCursor,
  RunTreeEvents,
  StoredEvent,
} from '@cairn/store';

/** What a continue request asks for (the HTTP body: `input`, `fork`, `upgrade`, `deadline_ms`). */
export type ContinueRunOptions = ContinueRequest;

/** What a continue did: resumed the run, found it already queued, or forked a new run. */
export interface ContinueRunResult {
  action: 'resume' | 'already-queued' | 'fork';
  run: RunRecord;
}

/** The routes' port: the part of the producer's `ProducerService` the HTTP API and the run pages use. */
export interface ProducerClient {
  enqueueRun(request: CreateRunRequest): Promise<CreatedRun>;
  /** The top-level entities runs may be created of. */
  servedEntities(): Promise<EntityRef[]>;
  runOwner(runId: string): Promise<{ tenantId: string | null } | undefined>;
  runSession(runId: string): Promise<SessionKey | undefined>;
  deleteSession(key: SessionKey): Promise<boolean>;
  continueRun(runId: string, options: ContinueRunOptions): Promise<ContinueRunResult>;
  forkRun(runId: string, request: ForkRequest): Promise<CreatedRun & { forkedFrom: ForkedFrom }>;
  cancelRun(runId: string): Promise<RunRecord>;
  suspendRun(runId: string, options: { now?: boolean }): Promise<SuspendOutcome>;
  resumeRun(runId: string): Promise<ResumeOutcome>;
  /** `decider`: the tenant of the deciding key (null: an admin key), which may decide less (docs/spend.md). */
  decide(
    runId: string,
    decisions: readonly PostedDecision[],
    decider: { tenantId: string | null },
  ): Promise<DecisionsResult>;
  getRun(runId: string, options?: RunViewOptions): Promise<RunView | undefined>;
  listRuns(filter: RunListFilter): Promise<RunListPage>;
  listRunMessages(runId: string, page: { offset: number; limit: number }): Promise<RunMessagesPage>;
  listEventsOfTypes(runId: string, types: readonly string[]): Promise<StoredEvent[]>;
  getRunStatus(runId: string): Promise<RunStatus | undefined>;
  getSession(key: SessionKey): Promise<SessionView | undefined>;
  listEvents(runId: string, afterSeq: number): Promise<StoredEvent[]>;
  readRunTreeEvents(runId: string, after: RunTreeCursor): Promise<RunTreeEvents | undefined>;
  countRunsByStatus(status: RunStatus): Promise<number>;
  fleetOverview(scope: { tenantId?: string }): Promise<FleetOverview>;
  revokeBrowserSession(nonce: string, expiresAt: Date): Promise<void>;
  isBrowserSessionRevoked(nonce: string): Promise<boolean>;
}
