import type { CheckpointStore } from '../checkpoint-store.js';
import { CheckpointWriteError, LeaseLostError } from '../errors.js';
import type { Message, Usage } from '../messages.js';
import type { CheckpointMode, RunErrorInfo, RunRecord, ToolCallRecord } from '../run-types.js';
import type { RunOutcome } from '../checkpoint-store.js';

/**
 * Holds what a run has done since its last commit and writes it according to
 * the checkpoint mode. Commits are serialised, so concurrent tool calls in
 * `tool-call` mode append in a well-defined order.
 */
export class Checkpointer {
  private pendingMessages: Message[] = [];
  private pendingToolCalls = new Map<string, ToolCallRecord>();
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly store: CheckpointStore,
    private readonly runId: string,
    private readonly epoch: number,
    readonly mode: CheckpointMode,
    private committedIndex: number,
    private readonly onCommitted: (index: number, messages: number) => void,
  ) {}

  /** Number of durably committed messages. */
  get lastCheckpointAtMessageIndex(): number {
    return this.committedIndex;
  }

  /** Records messages and tool call rows to be written at the next commit. */
  add(messages: readonly Message[], toolCalls: readonly ToolCallRecord[] = []): void {
    this.pendingMessages.push(...messages);
    for (const record of toolCalls) this.pendingToolCalls.set(record.toolCallId, record);
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
      this.pendingMessages = [];
      this.pendingToolCalls = new Map();
      this.committedIndex = await this.store
        .commitCheckpoint(this.runId, this.epoch, { messages, toolCalls, usage })
        .catch((error: unknown) => this.writeFailed(error));
      this.onCommitted(this.committedIndex, messages.length);
    });
  }

  /** Commits when the mode checkpoints after tool batches. */
  async afterBatch(usage: Usage): Promise<void> {
    if (this.mode !== 'run') await this.commit(usage);
  }

  /** In `tool-call` mode, commits the tool-call turn (and its `running` rows) before the calls run. */
  async beforeBatch(usage: Usage): Promise<void> {
    if (this.mode === 'tool-call') await this.commit(usage);
  }

  /** In `tool-call` mode, commits one finished call's result. */
  async afterCall(usage: Usage): Promise<void> {
    if (this.mode === 'tool-call') await this.commit(usage);
  }

  /** Writes the final status with everything still pending. */
  finish(
    status: RunOutcome['status'],
    content: string | null,
    error: RunErrorInfo | null,
    usage: Usage,
  ): Promise<RunRecord> {
    return this.serialise(() =>
      this.store
        .finishRun(this.runId, this.epoch, {
          status,
          content,
          error,
          delta: {
            messages: this.pendingMessages,
            toolCalls: [...this.pendingToolCalls.values()],
            usage,
          },
        })
        .catch((failure: unknown) => this.writeFailed(failure)),
    );
  }

  /** Fencing stays a `LeaseLostError`; any other store failure becomes a {@link CheckpointWriteError}. */
  private writeFailed(error: unknown): never {
    if (error instanceof LeaseLostError) throw error;
    throw new CheckpointWriteError(this.runId, { cause: error });
  }

  private serialise<T>(work: () => Promise<T>): Promise<T> {
    const next = this.chain.then(work, work);
    this.chain = next.catch(() => undefined);
    return next;
  }
}
