import type { RunEvent, RunEventSink } from '@cairn/engine';
import type { NewRunEvent } from '@cairn/store';

/** Where {@link EventWriter} appends events (`PostgresCheckpointStore` implements it). */
export interface EventAppender {
  appendEvents(runId: string, events: readonly NewRunEvent[]): Promise<number>;
}

/**
 * Buffers engine events and appends them to the store asynchronously, in
 * order per run; the engine's synchronous sink never blocks or fails the run.
 */
export class EventWriter {
  private readonly buffers = new Map<string, RunEvent[]>();
  private readonly drains = new Map<string, Promise<void>>();

  constructor(
    private readonly store: EventAppender,
    private readonly onError: (error: unknown, event: RunEvent) => void = () => undefined,
  ) {}

  /** The engine's `onEvent`. */
  readonly sink: RunEventSink = (event) => {
    const buffer = this.buffers.get(event.runId);
    if (buffer) {
      buffer.push(event);
      return;
    }
    this.buffers.set(event.runId, [event]);
    this.drains.set(event.runId, this.drain(event.runId));
  };

  /** Resolves once every event buffered so far is written (or given up on). */
  async flush(): Promise<void> {
    while (this.drains.size > 0) await Promise.all(this.drains.values());
  }

  private async drain(runId: string): Promise<void> {
    await Promise.resolve();
    const buffer = this.buffers.get(runId)!;
    while (buffer.length > 0) {
      // Everything buffered so far goes in one statement; later events wait for the next round.
      const batch = buffer.splice(0, buffer.length);
      try {
        await this.store.appendEvents(runId, batch.map(toStored));
      } catch (error) {
        this.onError(error, batch[0]!);
      }
    }
    this.buffers.delete(runId);
    this.drains.delete(runId);
  }
}

function toStored(event: RunEvent): NewRunEvent {
  return { type: event.type, data: { ...event.data, epoch: event.epoch, at: event.at } };
}
