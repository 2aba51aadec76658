/**
 * The benchmark's workload, shared by Cairn and the peers (no dependencies,
 * so the peer scripts under bench/peers import it too): an agent run of
 * BATCHES tool batches, each an assistant turn with CALLS_PER_BATCH calls of
 * the no-op `lookup` tool and their results, about 2 KB of JSON per batch.
 */

/** The no-op tool's name. */
export const TOOL_NAME = 'lookup';
/** Tool calls per batch. */
export const CALLS_PER_BATCH = 3;
/** Tool batches per run. */
export const BATCHES = 3;
/** Characters of one tool result. */
const RESULT_CHARS = 430;
/** Characters of one call's query argument. */
const QUERY_CHARS = 90;

const WORDS = (
  'the agent found a result about durable queues and checkpoints in postgres while the worker ' +
  'ran its tools for each batch of calls with retries latency fencing epoch recovery throughput ' +
  'memory history message model turn summary report research source detail item search fetch'
).split(' ');

/** Deterministic prose-like text (compressible like real text, not like a repeated string). */
export function prose(seed: number, length: number): string {
  let state = (seed * 2654435761) >>> 0 || 1;
  let text = '';
  while (text.length < length) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    text += `${WORDS[state % WORDS.length]} `;
  }
  return text.slice(0, length);
}

/** A tool call as the model requests it (Cairn's `ToolCallRequest` shape). */
export interface WorkloadToolCall {
  id: string;
  name: string;
  /** JSON text. */
  arguments: string;
}

/** Cairn's message shapes, structurally (no import, for the peers). */
export type WorkloadMessage =
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string | null; toolCalls?: WorkloadToolCall[] }
  | { role: 'tool'; toolCallId: string; name: string; content: string };

/** The arguments of call `call` (1-based) of batch `batch`. */
export function toolArgs(batch: number, call: number): { query: string } {
  return { query: prose(batch * 31 + call, QUERY_CHARS) };
}

/** What the no-op tool returns for `query`: a fixed-size text derived from it. */
export function toolResult(query: string): string {
  let seed = 7;
  for (let i = 0; i < query.length; i++) seed = (seed * 31 + query.charCodeAt(i)) >>> 0;
  return prose(seed, RESULT_CHARS);
}

/** The id Cairn's ScriptedModel gives call `call` of turn `batch` (both 1-based). */
export function toolCallId(batch: number, call: number): string {
  return `call_${batch}_${call}`;
}

/** The calls of batch `batch` (1-based). */
export function batchCalls(batch: number): WorkloadToolCall[] {
  const calls: WorkloadToolCall[] = [];
  for (let call = 1; call <= CALLS_PER_BATCH; call++) {
    calls.push({
      id: toolCallId(batch, call),
      name: TOOL_NAME,
      arguments: JSON.stringify(toolArgs(batch, call)),
    });
  }
  return calls;
}

/**
 * What the scripted model does after `toolResultsSoFar` results in this run: the next batch number, or 0 for the final answer.
 * @public bench/peers (a project of its own) imports it.
 */
export function nextBatch(toolResultsSoFar: number, batches = BATCHES): number {
  return toolResultsSoFar >= batches * CALLS_PER_BATCH
    ? 0
    : Math.floor(toolResultsSoFar / CALLS_PER_BATCH) + 1;
}

/** Batch `batch`: the assistant turn with its calls and the tool results, in history order. */
export function batchMessages(batch: number): WorkloadMessage[] {
  const calls = batchCalls(batch);
  const results: WorkloadMessage[] = calls.map((c) => ({
    role: 'tool',
    toolCallId: c.id,
    name: c.name,
    content: toolResult((JSON.parse(c.arguments) as { query: string }).query),
  }));
  return [{ role: 'assistant', content: null, toolCalls: calls }, ...results];
}

/** The run's input. */
export const RUN_INPUT = 'Research durable agent runs: look up three sources per step and report.';

/** The final answer after the last batch. */
export const FINAL_ANSWER = `Report. ${prose(99, 300)}`;

/** A history of exactly `count` messages: the input, then whole batches, cut at `count`. */
export function historyMessages(count: number): WorkloadMessage[] {
  const messages: WorkloadMessage[] = [{ role: 'user', content: RUN_INPUT }];
  for (let batch = 1; messages.length < count; batch++) messages.push(...batchMessages(batch));
  return messages.slice(0, count);
}
