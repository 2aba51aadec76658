import type { CreateRunRequest, DecisionsResult, PostedDecision, RunRecord, RunStatus } from '@cairn/engine';
import type { RunView, SessionView, StoredEvent } from '@cairn/store';

/** What a continue request asks for (the HTTP body, camelCased). */
export interface ContinueRunOptions {
  input?: string;
  fork?: boolean;
}

/** What a continue did: resumed the run, found it already queued, or forked a new run. */
export interface ContinueRunResult {
  action: 'resume' | 'already-queued' | 'fork';
  run: RunRecord;
}

/** The part of `@cairn/queue`'s `CairnClient` the HTTP API uses. */
export interface ProducerClient {
  enqueueRun(request: CreateRunRequest): Promise<RunRecord>;
  continueRun(runId: string, options: ContinueRunOptions): Promise<ContinueRunResult>;
  cancelRun(runId: string): Promise<RunRecord>;
  decide(runId: string, decisions: readonly PostedDecision[]): Promise<DecisionsResult>;
  getRun(runId: string): Promise<RunView | undefined>;
  getRunStatus(runId: string): Promise<RunStatus | undefined>;
  getSession(sessionId: string): Promise<SessionView | undefined>;
  listEvents(runId: string, afterSeq: number): Promise<StoredEvent[]>;
  countRunsByStatus(status: RunStatus): Promise<number>;
}
