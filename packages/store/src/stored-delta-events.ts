import type { RunEvent } from '@cairn/engine';

/** An event to append to a run's stream. */
export interface NewRunEvent {
  type: string;
  data: unknown;
}

/** One event of a `run_event_batches` row: whole, or a derived event in its compact form. */
export type BatchElement = NewRunEvent | string;

/**
 * A derived event as a batch stores it, one short string `<code><ms>:<fields>`: `ms` is its time
 * in milliseconds after the batch's first event, whose epoch it has. {@link derivedEventData}
 * reads it back whole from the string and that first event alone (the `run_events` view,
 * migration `0018_derived_events`, gives both):
 * - `S<ms>:<batch>:<name>:<toolCallId>`: `ToolCallStarted { toolCallId, name, batch }`;
 * - `C<ms>:<batch>:<name>:<toolCallId>`: `ToolCallCompleted`, the same way;
 * - `K<ms>:<lastCheckpointAtMessageIndex>:<messages>`: `CheckpointCommitted`.
 */
type CompactEvent = string;

/** The time format the view writes back: `Date#toISOString` of a year 1000 to 9999. */
const ISO_TIME = /^[1-9]\d{3}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/**
 * The events of a checkpoint or finish delta as its batch stores them (docs/operations.md, "Stored
 * events"): the first whole, and each later `ToolCallStarted`, `ToolCallCompleted` and
 * `CheckpointCommitted` compact when the view gives it back exactly as emitted: same epoch as
 * the first, data of the usual fields only, a tool name without `:`. Any other event is stored
 * whole. Every event keeps its place, so sequence numbers do not change.
 */
export function storedDeltaEvents(events: readonly RunEvent[]): BatchElement[] {
  const [first] = events;
  if (!first) return [];
  return events.map((event, i) => (i > 0 && compactForm(event, first)) || whole(event));
}

/** An engine event whole: its own fields, with the epoch and time it was published. */
function whole(event: RunEvent): NewRunEvent {
  return { type: event.type, data: { ...event.data, epoch: event.epoch, at: event.at } };
}

function compactForm(event: RunEvent, first: RunEvent): CompactEvent | undefined {
  if (event.epoch !== first.epoch || !ISO_TIME.test(event.at) || !ISO_TIME.test(first.at)) {
    return undefined;
  }
  const ms = Date.parse(event.at) - Date.parse(first.at);
  if (!Number.isSafeInteger(ms)) return undefined;
  const data = event.data;
  switch (event.type) {
    case 'ToolCallStarted':
    case 'ToolCallCompleted': {
      const { toolCallId, name, batch } = data;
      if (!hasOnly(data, ['toolCallId', 'name', 'batch'])) return undefined;
      if (typeof toolCallId !== 'string' || typeof name !== 'string' || name.includes(':')) {
        return undefined;
      }
      if (!isCount(batch)) return undefined;
      return `${event.type === 'ToolCallStarted' ? 'S' : 'C'}${ms}:${batch}:${name}:${toolCallId}`;
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

/**
 * The data of a derived event stored compact, whole again: exactly what was emitted, keys in the
 * order a whole event is stored in (`run_commits.events` is `json`: as written, its own fields,
 * then `epoch` and `at`), so the events API's output is the same byte for byte. `epoch` and
 * `firstAt` are the batch's first event's.
 */
export function derivedEventData(
  compact: CompactEvent,
  epoch: number,
  firstAt: string,
): Record<string, unknown> {
  const colon = compact.indexOf(':');
  const at = new Date(Date.parse(firstAt) + Number(compact.slice(1, colon))).toISOString();
  const fields = compact.slice(colon + 1);
  if (compact.startsWith('K')) {
    const [last, messages] = fields.split(':');
    return { lastCheckpointAtMessageIndex: Number(last), messages: Number(messages), epoch, at };
  }
  const afterBatch = fields.indexOf(':');
  const afterName = fields.indexOf(':', afterBatch + 1);
  return {
    toolCallId: fields.slice(afterName + 1),
    name: fields.slice(afterBatch + 1, afterName),
    batch: Number(fields.slice(0, afterBatch)),
    epoch,
    at,
  };
}

const DERIVED_TYPES: Readonly<Record<string, string>> = {
  S: 'ToolCallStarted',
  C: 'ToolCallCompleted',
  K: 'CheckpointCommitted',
};

/**
 * One event of a stored batch as the events API gives it: a whole event as stored, a compact
 * one made whole from its string and the batch's first event (always whole).
 */
export function eventOfBatch(element: BatchElement, first: BatchElement | undefined): NewRunEvent {
  if (typeof element !== 'string') return { type: element.type, data: element.data };
  const head = typeof first === 'object' ? (first.data as { epoch?: unknown; at?: unknown }) : {};
  const type = DERIVED_TYPES[element[0] ?? ''];
  if (!type || typeof head.epoch !== 'number' || typeof head.at !== 'string') {
    throw new Error(
      `stored event ${JSON.stringify(element)} cannot be read: no derived event has that form after its batch's first`,
    );
  }
  return { type, data: derivedEventData(element, head.epoch, head.at) };
}
