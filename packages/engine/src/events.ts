import type { Message } from './messages.js';
import type { ModelResponse } from './model.js';

/** Every event type a run publishes. */
export const RUN_EVENT_TYPES = [
  'RunStarted',
  'RunContinued',
  /** `{ from, to }`: the run resumed on another definition of its entity (`continue { upgrade: true }` or `onDefinitionChange: 'resume'`). */
  'DefinitionUpgraded',
  'ModelRequestStarted',
  'ModelRequestCompleted',
  /** `{ toolCallId, name, batch, mcpServer? }`: `mcpServer` names the MCP server a call of an `mcpTools` tool goes to. */
  'ToolCallStarted',
  'ToolCallCompleted',
  'ToolCallError',
  'CheckpointCommitted',
  /** `{ model, until, reason, waited_ms }`: no permit for `model` within the wait; the run parks (or, in `run` mode, waits in place) until `until`. */
  'CapacityWait',
  'RunPaused',
  /** `{ reason, action_id, now? }`: the run was suspended (PAUSED with a `suspended` action); deciding it resumes the run. */
  'RunSuspended',
  'RunCompleted',
  'RunError',
  'RunCancelled',
] as const;

/** One of {@link RUN_EVENT_TYPES}. */
export type RunEventType = (typeof RUN_EVENT_TYPES)[number];

/**
 * Events that are only published live, never stored (docs/http-api.md):
 * `ModelDelta { epoch, message_index, offset, text }`, a piece of a model's
 * text as it streams; `AttemptAbandoned { epoch }`, published first by an
 * execution that takes a run over from one that died, so a client drops the
 * partial text of that epoch.
 */
export const LIVE_EVENT_TYPES = ['ModelDelta', 'AttemptAbandoned'] as const;

/** One of {@link LIVE_EVENT_TYPES}. */
export type LiveEventType = (typeof LIVE_EVENT_TYPES)[number];

/** Something that happened in a run, in the order it happened. */
export interface RunEvent {
  type: RunEventType | LiveEventType;
  runId: string;
  /** Epoch of the execution that published it. */
  epoch: number;
  data: Record<string, unknown>;
  at: string;
}

/**
 * Receives a run's events in order, live, as they happen (the worker
 * publishes them on the run's live channel). Called synchronously on the
 * run's path: never block the loop. Storing them is not its job: each event
 * is stored by the checkpoint or finish statement that covers it.
 */
export type RunEventSink = (event: RunEvent) => void;

/**
 * What a run sent and got back, for those who asked to see it (the GenAI
 * conventions' opt-in message content, `docs/genai-traces.md`): a model
 * request with its answer, or a tool call's arguments with its result.
 * Handed over as it happens, before the event that ends the request or the
 * call; never published or stored by this path.
 */
export type RunContent =
  | {
      kind: 'model';
      runId: string;
      instructions: string;
      /** The history the request carried. */
      messages: readonly Message[];
      response: ModelResponse;
    }
  | { kind: 'tool'; runId: string; toolCallId: string; args: unknown; result: string | null };

/** Receives {@link RunContent}; called synchronously on the run's path: never block the loop. */
export type RunContentSink = (content: RunContent) => void;
