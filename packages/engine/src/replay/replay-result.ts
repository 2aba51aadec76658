import { printable } from './printable.js';

/** The first step at which the current code does something other than the stored run did. */
export interface ReplayDivergence {
  /** The model turn (1-based, within its run) that made the diverging call or answer. */
  turn: number;
  /** The tool of the diverging call, if a call diverged. */
  tool?: string;
  /** The argument that no longer validates (a dotted path), if one does not. */
  field?: string;
  /** What differs, for a person. */
  message: string;
  /** The run it happened in: the replayed run or one of its member runs. */
  runId: string;
  /** That run's entity name (a member run's is its path, e.g. `research-team/researcher`). */
  entity: string;
}

/** What {@link replayRun} found: how far it got, and the first divergence if there was one. */
export type ReplayResult =
  | { ok: true; turns: number; toolCalls: number }
  | { ok: false; turns: number; toolCalls: number; divergence: ReplayDivergence };

/**
 * The line `npm run replay` prints: `replayed 4 turns, 5 tool calls: ok`, or
 * the first divergence (`turn 3: tool "x" args {...} no longer valid: ...`),
 * naming the member run when it happened in one. One line whatever the run
 * holds: its names and contents come with their control characters escaped.
 */
export function describeReplay(result: ReplayResult, rootRunId: string): string {
  if (result.ok) return `replayed ${result.turns} turns, ${result.toolCalls} tool calls: ok`;
  const { divergence } = result;
  const where =
    divergence.runId === rootRunId ? '' : `member run ${divergence.runId} (${divergence.entity}) `;
  return printable(`${where}turn ${divergence.turn}: ${divergence.message}`);
}
