import { SYSTEM_CLOCK, type Clock } from '../engine-resources.js';
import type { CheckpointStore } from '../checkpoint-store.js';
import { CheckpointWriteError, ContinueArrivedError, LeaseLostError } from '../errors.js';
import type { LiveEventType, RunEvent, RunEventSink, RunEventType } from '../events.js';
import type { Message, Usage } from '../messages.js';
import type {
  CheckpointMode,
  RunErrorInfo,
  RunRecord,
  RunWaiting,
  ToolCallRecord,
} from '../run-types.js';
import type { RunOutcome } from '../checkpoint-store.js';
import type { NewPendingAction } from '../hitl/pending-action.js';

/** An event a finish ends the run with (`RunCompleted`, `RunError`, `RunCancelled`, `RunPaused`). */
export interface FinalEvent {
  type: RunEventType;
  data: Record<string, unknown>;
  /** Set when the finish closes the tool rows still `running`: the result they get (the lifecycle says when). */
  openCallsResult?: string;
  /** A waiting continue request the finish leaves waiting, untaken (an execution stopped at its deadline). */
  keepsContinueRequest?: string;
}

/**
 * Holds what a run has done since its last commit (messages, tool call rows,
 * events) and writes it according to the checkpoint mode. Events are
 * published live when they happen and stored by the commit that covers them,
 * so a stored event is never contradicted by a crash. Commits are
 * serialised, so concurrent tool calls in `tool-call` mode append in a
 * well-defined order.
 */
export class Checkpointer {
  private pendingMessages: Message[] = [];
  private pendingToolCalls = new Map<string, ToolCallRecord>();
  private pendingEvents: RunEvent[] = [];
  /** Tool rows stored or to be stored as `running`: a final finish closes those still open. */
  private readonly openToolCalls = new Map<string, ToolCallRecord>();
  /** The continue request whose input the pending messages take in. */
  private continueRequest: string | undefined;
  private chain: Promise<unknown> = Promise.resolve();
  private pendingActions: NewPendingAction[] = [];

  constructor(
    private readonly store: Pick<CheckpointStore, 'commitCheckpoint' | 'finishRun'>,
    private readonly runId: string,
    private readonly epoch: number,
    readonly mode: CheckpointMode,
    private committedIndex: number,
    private readonly publish: RunEventSink = () => undefined,
    private readonly clock: Clock = SYSTEM_CLOCK,
  ) {}

  /** Publishes an event live now; the next commit stores it. */
  emit(type: RunEventType, data: Record<string, unknown>): void {
    const event = this.event(type, data);
    this.pendingEvents.push(event);
    this.publish(event);
  }

  /** Publishes a live-only event (a model text delta, an abandoned attempt): never stored. */
  publishLive(type: LiveEventType, data: Record<string, unknown>): void {
    this.publish(this.event(type, data));
  }

  /** Number of durably committed messages. */
  get lastCheckpointAtMessageIndex(): number {
    return this.committedIndex;
  }

  /** Records messages and tool call rows to be written at the next commit. */
  add(messages: readonly Message[], toolCalls: readonly ToolCallRecord[] = []): void {
    this.pendingMessages.push(...messages);
    for (const record of toolCalls) this.pendingToolCalls.set(record.toolCallId, record);
    this.track(toolCalls);
  }

  /** Tool rows already stored (the loaded history): those still `running` are closed by a final finish. */
  track(toolCalls: readonly ToolCallRecord[]): void {
    for (const record of toolCalls) {
      if (record.status === 'running') this.openToolCalls.set(record.toolCallId, record);
      else this.openToolCalls.delete(record.toolCallId);
    }
  }

  /** The next commit takes in continue request `requestId` (its input is among the pending messages): stored as applied by it. */
  applyContinueRequest(requestId: string): void {
    this.continueRequest = requestId;
  }

  /** Keeps only the first `count` uncommitted messages: drops an interrupted batch. */
  truncatePending(count: number): void {
    this.pendingMessages.length = Math.min(this.pendingMessages.length, count);
  }

  /** How many messages are waiting for a commit. */
  get pendingMessageCount(): number {
    return this.pendingMessages.length;
  }

  /** Commits whatever is pending as a RUNNING checkpoint (no-op when nothing is). */
  commit(usage: Usage): Promise<void> {
    return this.serialise(async () => {
      if (this.pendingMessages.length === 0 && this.pendingToolCalls.size === 0) return;
      const messages = this.pendingMessages;
      const toolCalls = [...this.pendingToolCalls.values()];
      const committed = this.event('CheckpointCommitted', {
        lastCheckpointAtMessageIndex: this.committedIndex + messages.length,
        messages: messages.length,
      });
      const events = [...this.pendingEvents, committed];
      const appliesContinueRequest = this.continueRequest;
      this.pendingMessages = [];
      this.pendingToolCalls = new Map();
      this.pendingEvents = [];
      this.continueRequest = undefined;
      this.committedIndex = await this.store
        .commitCheckpoint(this.runId, this.epoch, {
          messages,
          toolCalls,
          usage,
          events,
          ...(appliesContinueRequest === undefined ? {} : { appliesContinueRequest }),
        })
        .catch((error: unknown) => this.writeFailed(error));
      this.publish(committed);
    });
  }

  /**
   * Parks the run for model capacity: one fenced write of whatever is
   * pending with the `CapacityWait` event, which ends the attempt (`parked`)
   * and shows what the run waits for; the run stays RUNNING. Always writes,
   * even with nothing pending.
   */
  park(usage: Usage, waiting: RunWaiting, wait: Record<string, unknown>): Promise<void> {
    return this.serialise(async () => {
      const event = this.event('CapacityWait', {
        ...wait,
        model: waiting.model,
        until: waiting.until,
      });
      const messages = this.pendingMessages;
      const delta = {
        messages,
        toolCalls: [...this.pendingToolCalls.values()],
        usage,
        events: [...this.pendingEvents, event],
        park: waiting,
        ...(this.continueRequest === undefined
          ? {}
          : { appliesContinueRequest: this.continueRequest }),
      };
      this.pendingMessages = [];
      this.pendingToolCalls = new Map();
      this.pendingEvents = [];
      this.continueRequest = undefined;
      this.committedIndex = await this.store
        .commitCheckpoint(this.runId, this.epoch, delta)
        .catch((error: unknown) => this.writeFailed(error));
      this.publish(event);
    });
  }

  /** Commits when the mode checkpoints after tool batches. */
  async afterBatch(usage: Usage): Promise<void> {
    if (this.mode !== 'run') await this.commit(usage);
  }

  /** In `tool-call` mode, commits one finished call's result. */
  async afterCall(usage: Usage): Promise<void> {
    if (this.mode === 'tool-call') await this.commit(usage);
  }

  /** Pending actions the PAUSED finish commits with the rest of the delta. */
  pause(actions: readonly NewPendingAction[]): void {
    this.pendingActions.push(...actions);
  }

  /**
   * Writes the final status with everything still pending and the final
   * event, then publishes it; with `final.openCallsResult`, also closes the
   * tool rows left `running` with that result. Rejects with `ContinueArrivedError` (nothing written, the
   * pending work kept) when a continue request arrived that this execution
   * has not taken in.
   */
  finish(
    status: RunOutcome['status'],
    content: string | null,
    error: RunErrorInfo | null,
    usage: Usage,
    final: FinalEvent,
  ): Promise<RunRecord> {
    return this.serialise(async () => {
      const event = this.event(final.type, final.data);
      const toolCalls = new Map(this.pendingToolCalls);
      if (final.openCallsResult !== undefined) {
        for (const [id, open] of this.openToolCalls) {
          toolCalls.set(id, {
            ...open,
            status: 'error',
            result: final.openCallsResult,
            endedAt: this.clock.now(),
          });
        }
      }
      const run = await this.store
        .finishRun(this.runId, this.epoch, {
          status,
          content,
          error,
          delta: {
            messages: this.pendingMessages,
            toolCalls: [...toolCalls.values()],
            usage,
            events: [...this.pendingEvents, event],
            ...(this.continueRequest === undefined
              ? {}
              : { appliesContinueRequest: this.continueRequest }),
            ...(final.keepsContinueRequest !== undefined && {
              keepsContinueRequest: final.keepsContinueRequest,
            }),
          },
          ...(status === 'PAUSED' && { pendingActions: this.pendingActions }),
        })
        .catch((failure: unknown) => this.writeFailed(failure));
      this.publish(event);
      return run;
    });
  }

  private event(type: RunEventType | LiveEventType, data: Record<string, unknown>): RunEvent {
    return { type, runId: this.runId, epoch: this.epoch, data, at: this.clock.now().toISOString() };
  }

  /** Fencing stays a `LeaseLostError`; any other store failure becomes a {@link CheckpointWriteError}. */
  private writeFailed(error: unknown): never {
    if (error instanceof LeaseLostError || error instanceof ContinueArrivedError) throw error;
    throw new CheckpointWriteError(this.runId, { cause: error });
  }

  private serialise<T>(work: () => Promise<T>): Promise<T> {
    const next = this.chain.then(work, work);
    this.chain = next.catch(() => undefined);
    return next;
  }
}
