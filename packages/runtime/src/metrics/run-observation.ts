import { FINISH_EVENT_TYPE, type RunEvent, type RunStatus, type Usage } from '@cairn/engine';

/**
 * One measurement of a run's work, as plain data so that an execution thread
 * can post it to the main thread, whose registry `/metrics` serves.
 */
export type RunObservation =
  | { kind: 'claim'; reason: string }
  | { kind: 'finished'; entity: string; status: RunStatus }
  | { kind: 'lease-lost' }
  | { kind: 'checkpoint-commit'; seconds: number }
  /**
   * A model request's time; for the turn's answer (not a retry), the usage the provider reported,
   * its cost in micro-dollars at the worker's prices and the run's tenant ('' for none).
   */
  | {
      kind: 'model-request';
      model: string;
      seconds: number;
      usage: Usage | null;
      costMicroUsd: number;
      tenant: string;
    }
  | { kind: 'tool-call'; tool: string; status: 'completed' | 'error'; seconds: number }
  /** A provider answered a model request 429 (the fleet pauses the model). */
  | { kind: 'rate-limited'; model: string }
  /** A model turn got its permits after waiting this long (across parks); tenant '' for none. */
  | { kind: 'capacity-wait'; model: string; tenant: string; seconds: number };

/** Receives observations (the metrics registry, or a thread's port to it). */
export type RunObserver = (observation: RunObservation) => void;

/** The status each closing event stands for (the engine's own map, read backwards). */
const FINISH_EVENTS: ReadonlyMap<string, RunStatus> = new Map(
  Object.entries(FINISH_EVENT_TYPE).map(([status, type]) => [type, status as RunStatus]),
);

interface RunTimers {
  entity: string;
  model?: { name: string; startedAt: number };
  tools: Map<string, number>;
}

/**
 * Turns a run's events into observations: pairs `ModelRequestStarted` with
 * its `ModelRequestCompleted` and each `ToolCallStarted` with its end, and
 * reads claims, finishes, 429s and waits for model permits. The engine's
 * sink is synchronous, so the time an event arrives is the time it happened.
 */
export class RunEventObserver {
  private readonly runs = new Map<string, RunTimers>();

  constructor(
    private readonly observe: RunObserver,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** The engine's `onEvent` (or one of its listeners). */
  readonly sink = (event: RunEvent): void => {
    const at = this.now();
    const data = event.data;
    if (event.type === 'RunStarted' || event.type === 'RunContinued') {
      const entity = data.entity as { name?: string } | undefined;
      this.runs.set(event.runId, { entity: entity?.name ?? 'unknown', tools: new Map() });
      this.observe({ kind: 'claim', reason: String(data.reason) });
      return;
    }
    const run = this.runs.get(event.runId);
    if (!run) return;
    switch (event.type) {
      case 'ModelRequestStarted':
        run.model = { name: String(data.model), startedAt: at };
        return;
      case 'ModelRequestCompleted':
        this.capacity(data);
        if (!run.model) return;
        this.observe({
          kind: 'model-request',
          model: run.model.name,
          seconds: (at - run.model.startedAt) / 1000,
          usage: data.retrying ? null : ((data.usage as Usage | null | undefined) ?? null),
          costMicroUsd:
            !data.retrying && typeof data.costMicroUsd === 'number' ? data.costMicroUsd : 0,
          tenant: tenantOf(data),
        });
        // A retry is a new request of the same model, timed from now.
        run.model = data.retrying ? { name: run.model.name, startedAt: at } : undefined;
        return;
      case 'ToolCallStarted':
        run.tools.set(String(data.toolCallId), at);
        return;
      case 'ToolCallCompleted':
      case 'ToolCallError': {
        const startedAt = run.tools.get(String(data.toolCallId));
        if (startedAt === undefined) return;
        run.tools.delete(String(data.toolCallId));
        const status = event.type === 'ToolCallError' ? 'error' : 'completed';
        this.observe({
          kind: 'tool-call',
          tool: String(data.name),
          status,
          seconds: (at - startedAt) / 1000,
        });
        return;
      }
      default: {
        const status = FINISH_EVENTS.get(event.type);
        if (!status) return;
        this.observe({ kind: 'finished', entity: run.entity, status });
        this.runs.delete(event.runId);
      }
    }
  };

  /**
   * A 429 (`rateLimited`), and the wait for permits a model turn's answer
   * reports (`capacityWaitMs`: the whole wait, parks included, observed once
   * when the permit comes; a park itself is not observed, or its wait would
   * count twice).
   */
  private capacity(data: Record<string, unknown>): void {
    const model = String(data.model);
    if (data.rateLimited === true) this.observe({ kind: 'rate-limited', model });
    if (data.retrying || typeof data.capacityWaitMs !== 'number') return;
    this.observe({
      kind: 'capacity-wait',
      model,
      tenant: tenantOf(data),
      seconds: data.capacityWaitMs / 1000,
    });
  }

  /** Forgets a run whose execution stopped without a closing event (lease lost, hand-over, crash of the store). */
  forget(runId: string): void {
    this.runs.delete(runId);
  }
}

/** The run's tenant a model turn's answer names ('' for none, and for events written before it did). */
function tenantOf(data: Record<string, unknown>): string {
  return typeof data.tenant === 'string' ? data.tenant : '';
}
