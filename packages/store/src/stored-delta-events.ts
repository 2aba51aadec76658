import type { RunEvent, ToolCallRecord } from '@cairn/engine';
import type { BatchElement, NewRunEvent } from './run-events.js';

/**
 * A derived event as a batch stores it, one short string `<code><ms>:<fields>`: `ms` is its time
 * in milliseconds after the batch's first event, whose epoch it has, and `fields` what the rows
 * the same statement writes do not say. The `run_events` view (migration `0018_derived_events`)
 * reads it back whole:
 * - `S<ms>:<toolCallId>`: `ToolCallStarted { toolCallId, name, batch }`, name and batch from the call's `tool_calls` row;
 * - `C<ms>:<toolCallId>`: `ToolCallCompleted`, the same way;
 * - `K<ms>:<lastCheckpointAtMessageIndex>:<messages>`: `CheckpointCommitted`.
 */
type CompactEvent = string;

/** The time format the view writes back: `Date#toISOString` of a year 1000 to 9999. */
const ISO_TIME = /^[1-9]\d{3}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/**
 * The events of a checkpoint or finish delta as its batch stores them (docs/operations.md, "Stored
 * events"): the first whole, and each later `ToolCallStarted`, `ToolCallCompleted` and
 * `CheckpointCommitted` compact when the view gives it back exactly as emitted: same epoch as
 * the first, data of the usual fields only and, for a call, its record in the delta with the
 * same name and batch (the row the statement writes). Any other event is stored whole. Every
 * event keeps its place, so sequence numbers do not change.
 */
export function storedDeltaEvents(
  events: readonly RunEvent[],
  calls: readonly ToolCallRecord[],
): BatchElement[] {
  const [first] = events;
  if (!first) return [];
  const latest = new Map(calls.map((call) => [call.toolCallId, call]));
  return events.map((event, i) => (i > 0 && compactForm(event, first, latest)) || whole(event));
}

/** An engine event whole: its own fields, with the epoch and time it was published. */
function whole(event: RunEvent): NewRunEvent {
  return { type: event.type, data: { ...event.data, epoch: event.epoch, at: event.at } };
}

function compactForm(
  event: RunEvent,
  first: RunEvent,
  calls: ReadonlyMap<string, ToolCallRecord>,
): CompactEvent | undefined {
  if (event.epoch !== first.epoch || !ISO_TIME.test(event.at) || !ISO_TIME.test(first.at)) {
    return undefined;
  }
  const ms = Date.parse(event.at) - Date.parse(first.at);
  if (!Number.isSafeInteger(ms)) return undefined;
  const data = event.data;
  switch (event.type) {
    case 'ToolCallStarted':
    case 'ToolCallCompleted': {
      if (!hasOnly(data, ['toolCallId', 'name', 'batch'])) return undefined;
      const call = typeof data.toolCallId === 'string' ? calls.get(data.toolCallId) : undefined;
      if (!call || call.name !== data.name || call.batch !== data.batch) return undefined;
      return `${event.type === 'ToolCallStarted' ? 'S' : 'C'}${ms}:${call.toolCallId}`;
    }
    case 'CheckpointCommitted': {
      const { lastCheckpointAtMessageIndex: last, messages } = data;
      if (!hasOnly(data, ['lastCheckpointAtMessageIndex', 'messages'])) return undefined;
      if (!isCount(last) || !isCount(messages)) return undefined;
      return `K${ms}:${last}:${messages}`;
    }
    default:
      return undefined;
  }
}

function hasOnly(data: Record<string, unknown>, keys: readonly string[]): boolean {
  const own = Object.keys(data);
  return own.length === keys.length && keys.every((key) => own.includes(key));
}

function isCount(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 0;
}
