import type { ExecutableTool, ToolInvocationResult } from '../executable-tool.js';
import {
  actionIdempotencyKey,
  digestArgs,
  type PendingActionRecord,
} from '../hitl/pending-action.js';
import type { AssistantMessage, Message, ToolCallRequest, ToolResultMessage } from '../messages.js';
import type { Entity } from '../registry.js';
import { isOutputRetryMessage, outputCheckFor } from '../runner/output-type.js';
import type { PauseSignal } from '../runner/pause-signal.js';
import { refusalOf, storedHandlingOf, type CallDivergence } from './call-verdict.js';
import type { ReplayDivergence } from './replay-result.js';
import { DivergenceFound, StoredHistoryEnded, StoredToolFailure } from './replay-signals.js';
import type { ExportedAction, ExportedRun } from './run-export.js';

/** What the replays of one run tree share: its member runs, and what was replayed so far. */
export interface ReplayTree {
  members: ReadonlyMap<string, ExportedRun>;
  turns: number;
  toolCalls: number;
}

/**
 * One stored run as the turn loop replays it: answers each model turn with
 * the stored assistant message once the history the loop built matches the
 * stored one, gives each call the current code runs its stored result, and
 * names the first place where the current code does something else.
 */
export class RunReplay {
  /** The turn loop's signal: aborted with the signal that ends the replay from inside a tool call. */
  readonly controller = new AbortController();
  private readonly results = new Map<string, ToolResultMessage>();
  private readonly actions = new Map<string, ExportedAction>();
  private readonly calls = new Map<string, { call: ToolCallRequest; turn: number }>();
  /** The tools the loop runs (set once built): a call it refused is diagnosed with them. */
  tools: ReadonlyMap<string, ExecutableTool> = new Map();
  /** Calls the current code ran (the replay gave them their stored result). */
  private readonly ran = new Set<string>();
  /** Messages of the loop's history already checked against the stored history. */
  private checked = 1;
  private turn = 0;

  constructor(
    readonly entity: Entity,
    readonly stored: ExportedRun,
    private readonly tree: ReplayTree,
  ) {
    let turn = 0;
    for (const message of stored.messages) {
      if (message.role === 'tool') this.results.set(message.toolCallId, message);
      if (message.role !== 'assistant') continue;
      turn += 1;
      for (const call of message.toolCalls ?? []) this.calls.set(call.id, { call, turn });
    }
    // Budget and suspended actions stop the run between turns, on no tool call.
    for (const action of stored.actions)
      if (action.kind !== 'budget' && action.kind !== 'suspended')
        this.actions.set(action.tool_call_id, action);
  }

  /** The history the loop starts from: the stored run's first message (its input). */
  startingMessages(): Message[] {
    const first = this.stored.messages[0];
    return [first?.role === 'user' ? { ...first } : { role: 'user', content: this.stored.input }];
  }

  /** The stored run's pending actions on tool calls, as the turn loop reads them on a resume. */
  actionRecords(): PendingActionRecord[] {
    return [...this.actions.values()].map((action) => ({
      actionId: action.action_id,
      kind: action.kind,
      runId: this.stored.run_id,
      rootRunId: this.stored.run_id,
      memberPath: [],
      toolCallId: action.tool_call_id,
      tool: action.tool,
      args: action.args,
      argsDigest: digestArgs(action.args),
      argsSchema: null,
      batch: action.batch,
      status: action.status,
      decision: action.decision,
      onTimeout: 'reject',
      expiresAt: null,
      decidedAt: action.decided_at === null ? null : new Date(action.decided_at),
      consumedAt: null,
      consumedEpoch: null,
      createdAt: new Date(0),
    }));
  }

  /**
   * The next model turn: the stored assistant message that follows the loop's
   * history, once it matches. User messages the stored history has between
   * the loop's last message and that turn were taken in from outside the loop
   * (a fork's input after its shared history, a continue's input after a
   * batch): they are added to the loop's `messages`, as the engine added them.
   */
  answerTurn(messages: Message[]): AssistantMessage {
    const next = this.nextStoredTurn();
    this.checkSince(messages, next);
    const between = this.stored.messages.slice(messages.length, next);
    if (
      between.length > 0 &&
      between.every((m) => m.role === 'user' && !isOutputRetryMessage(m.content))
    ) {
      messages.push(...between.map((m) => ({ ...m })));
      this.checked = messages.length;
    }
    const answer = this.stored.messages[next];
    if (answer?.role !== 'assistant') throw new StoredHistoryEnded(this.stored.run_id);
    if (messages.length !== next)
      this.diverge({
        message: `the history has ${messages.length} messages before this turn; the stored run had ${next}`,
      });
    this.turn += 1;
    this.tree.turns += 1;
    this.checked = next + 1;
    return answer;
  }

  /**
   * A call of a user tool the current code runs: its stored result. Diverges
   * when the stored run did not run it (a person had to decide it first, or
   * the engine refused it); ends the replay where the stored run has no result.
   */
  storedResult(toolCallId: string, idempotencyKey: string): ToolInvocationResult {
    const action = this.actions.get(toolCallId);
    const name = this.calls.get(toolCallId)?.call.name ?? 'unknown';
    if (action && idempotencyKey !== actionIdempotencyKey(action.action_id))
      this.stop(
        this.placed(toolCallId, {
          tool: name,
          message: `tool "${name}" no longer waits for a person: the stored call had ${action.kind} action ${action.action_id}`,
        }),
      );
    const result = this.results.get(toolCallId);
    if (!action && storedHandlingOf(result, undefined) === 'refused')
      this.stop(
        this.placed(toolCallId, {
          tool: name,
          message: `tool "${name}" runs now; the stored run refused the call: ${firstLine(result!.content)}`,
        }),
      );
    if (!result) this.stop(new StoredHistoryEnded(this.stored.run_id));
    this.ran.add(toolCallId);
    if (result.isError) throw new StoredToolFailure(result.content);
    return { output: result.content };
  }

  /**
   * A delegation the current code runs: its member run's stored record, to
   * replay; undefined when the file has none but the delegation has its
   * result (a fork's team reuses member runs of its source, stored under it),
   * so only the team's side is checked. Ends the replay where the stored run
   * has neither.
   */
  memberRunOf(toolCallId: string): ExportedRun | undefined {
    this.ran.add(toolCallId);
    const childId = this.stored.tool_calls.find((c) => c.tool_call_id === toolCallId)?.child_run_id;
    const member =
      (childId ? this.tree.members.get(childId) : undefined) ??
      [...this.tree.members.values()].find((m) => m.parent_tool_call_id === toolCallId);
    if (!member && !this.results.has(toolCallId))
      this.stop(new StoredHistoryEnded(this.stored.run_id));
    return member;
  }

  /** A delegation's stored result, once its member run (if the file has it) replayed. */
  delegationResult(toolCallId: string, member: ExportedRun | undefined): ToolInvocationResult {
    const result = this.results.get(toolCallId);
    if (!result) this.stop(new StoredHistoryEnded(this.stored.run_id));
    if (result.isError) throw new StoredToolFailure(result.content);
    return { output: result.content, ...(member && { childRunId: member.run_id }) };
  }

  /** Ends the replay from inside a tool call: the loop's executor turns the abort's reason into its rejection. */
  stop(signal: DivergenceFound | StoredHistoryEnded): never {
    this.controller.abort(signal);
    throw signal;
  }

  /**
   * The loop paused on gated calls: each must have been gated in the stored
   * run too. Returns true to resume with the stored decisions; throws where
   * the stored run paused for good (an undecided action) or diverged.
   */
  afterPause(pause: PauseSignal, messages: readonly Message[]): void {
    const gated = (pause.data.actions as { tool_call_id: string }[] | undefined) ?? [];
    for (const { tool_call_id: id } of gated) {
      const action = this.actions.get(id);
      const name = this.calls.get(id)?.call.name ?? 'unknown';
      if (!action)
        throw this.placed(id, {
          tool: name,
          message: `tool "${name}" now waits for a person (needsApproval or external); the stored call ran without one`,
        });
    }
    this.checkSince(messages, this.nextStoredTurn());
    if (gated.some(({ tool_call_id: id }) => this.actions.get(id)?.status === 'pending'))
      throw new StoredHistoryEnded(this.stored.run_id);
  }

  /**
   * The loop gave its final answer: the replay is done when the stored
   * history ends there too; a user message after it is a continue's input
   * (returned, for the loop to go on with), unless it was the output type's
   * refusal of an answer the current code accepts.
   */
  afterAnswer(messages: readonly Message[]): Message[] | undefined {
    const next = this.stored.messages[messages.length];
    if (next === undefined) return undefined;
    if (next.role === 'user' && isOutputRetryMessage(next.content))
      this.diverge({
        message: `the final answer is accepted now; the stored run's outputType refused it`,
      });
    return next.role === 'user' ? [{ ...next }] : [];
  }

  /**
   * The loop stopped with an error of its own (max turns, a failed member):
   * fine where the stored history stops too; a continue's input after it is
   * returned for the loop to go on with; anything else diverges.
   */
  afterError(error: unknown, messages: readonly Message[]): Message[] | undefined {
    this.checkSince(messages, this.nextStoredTurn());
    const next = this.stored.messages[messages.length];
    if (next === undefined) return undefined;
    if (next.role === 'user') return [{ ...next }];
    const name = error instanceof Error ? error.name : 'Error';
    const message = error instanceof Error ? error.message : String(error);
    this.diverge({
      message: `the run now stops with ${name}: ${message}; the stored run went on`,
    });
  }

  /** Index of the stored assistant message the next turn answers with (the stored length when none). */
  private nextStoredTurn(): number {
    const { messages } = this.stored;
    let index = this.checked;
    while (index < messages.length && messages[index]!.role !== 'assistant') index += 1;
    return index;
  }

  /**
   * Checks what the loop added since the last check (tool results, retry
   * messages) against the stored messages before `end`.
   */
  private checkSince(messages: readonly Message[], end: number): void {
    const added = messages.slice(this.checked);
    const stored = this.stored.messages.slice(this.checked, end);
    for (const message of added) {
      if (message.role === 'tool') this.checkResult(message, end);
    }
    const retries = added.filter((m) => m.role === 'user' && isOutputRetryMessage(m.content));
    const storedRetries = stored.filter(
      (m) => m.role === 'user' && isOutputRetryMessage(m.content),
    );
    if (retries.length > storedRetries.length) this.outputRefused(messages);
    this.checked = Math.max(this.checked, messages.length);
  }

  private checkResult(message: ToolResultMessage, end: number): void {
    const id = message.toolCallId;
    const stored = this.results.get(id);
    if (!stored && end >= this.stored.messages.length)
      throw new StoredHistoryEnded(this.stored.run_id);
    this.tree.toolCalls += 1;
    if (this.ran.has(id)) return;
    // The current code did not run it: it refused it, or followed the stored person's decision.
    const handling = storedHandlingOf(stored, this.actions.get(id));
    if (handling !== 'ran') return;
    const placed = this.calls.get(id);
    if (!placed)
      this.diverge({ message: `the loop answered call ${id}, which the stored run never made` });
    throw this.placed(id, refusalOf(placed.call, this.tools, this.owner(), message.content));
  }

  /** The loop refused a final answer the stored run accepted: the outputType no longer parses it. */
  private outputRefused(messages: readonly Message[]): never {
    const answer = [...messages].reverse().find((m) => m.role === 'assistant');
    const content = answer?.role === 'assistant' ? (answer.content ?? '') : '';
    const checked = this.entity.outputType && outputCheckFor(this.entity.outputType).check(content);
    const problem = checked && !checked.ok ? checked.problem : 'refused';
    this.diverge({ message: `the final answer no longer matches the outputType: ${problem}` });
  }

  private owner(): string {
    return `${this.entity.kind} "${this.entity.name}"`;
  }

  private placed(toolCallId: string, divergence: CallDivergence): DivergenceFound {
    return new DivergenceFound({
      turn: this.calls.get(toolCallId)?.turn ?? this.turn,
      ...divergence,
      runId: this.stored.run_id,
      entity: this.stored.entity.name,
    });
  }

  private diverge(
    divergence: Pick<ReplayDivergence, 'message'> & Partial<ReplayDivergence>,
  ): never {
    throw new DivergenceFound({
      turn: this.turn,
      runId: this.stored.run_id,
      entity: this.stored.entity.name,
      ...divergence,
    });
  }
}

function firstLine(text: string): string {
  return text.split('\n', 1)[0]!;
}
