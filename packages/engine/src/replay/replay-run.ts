import { SYSTEM_CLOCK } from '../engine-resources.js';
import type { Message } from '../messages.js';
import type { Registry, Entity } from '../registry.js';
import type { ExecutableTool } from '../executable-tool.js';
import { DEFAULT_RETRY_POLICY } from '../runner/model-retry.js';
import { toolsFor } from '../runner/open-execution.js';
import { outputCheckFor } from '../runner/output-type.js';
import { PauseSignal } from '../runner/pause-signal.js';
import { runTurnLoop, type TurnLoopState } from '../runner/turn-loop.js';
import { DELEGATE_TOOL_NAME } from '../team.js';
import type { ToolContext } from '../tool.js';
import { replayCheckpointer } from './replay-checkpointer.js';
import { budgetStopOf } from '../lifecycle/budget-stop.js';
import { ReplayModel } from './replay-model.js';
import type { ReplayResult } from './replay-result.js';
import { DivergenceFound, StoredHistoryEnded } from './replay-signals.js';
import type { ExportedRun, RunExport } from './run-export.js';
import { RunReplay, type ReplayTree } from './run-replay.js';

/**
 * Drives the current registry's definition of a stored run's entity over the
 * run, with no model and no tool: the engine's turn loop runs as it would,
 * each model turn answered with the stored assistant message and each tool
 * call the current code runs given its stored result. Reports the first
 * place where the current code does something else: a tool that is gone,
 * arguments its schema no longer takes, a delegation to a member that is
 * gone, a call that gates where it did not (or the reverse), a final answer
 * the `outputType` no longer parses. A team's member runs are replayed too,
 * on the team's current members.
 *
 * @example
 * ```ts
 * const result = await replayRun(registry, await readRunFile('runs/refund.json'));
 * expect(result).toMatchObject({ ok: true });
 * ```
 */
export async function replayRun(registry: Registry, run: RunExport): Promise<ReplayResult> {
  const tree: ReplayTree = {
    members: new Map(run.members.map((member) => [member.run_id, member])),
    turns: 0,
    toolCalls: 0,
  };
  const { entity, run_id: runId } = run.run;
  const found = registry.has(entity)
    ? await replayStoredRun(registry.get(entity), run.run, tree)
    : new DivergenceFound({
        turn: 0,
        message: `${entity.kind} "${entity.name}" is not in the registry`,
        runId,
        entity: entity.name,
      });
  const { turns, toolCalls } = tree;
  return found
    ? { ok: false, turns, toolCalls, divergence: found.divergence }
    : { ok: true, turns, toolCalls };
}

/** Replays one run of the tree (a member run when its team's delegation runs); resolves with its divergence, if any. */
async function replayStoredRun(
  entity: Entity,
  stored: ExportedRun,
  tree: ReplayTree,
): Promise<DivergenceFound | undefined> {
  const replay = new RunReplay(entity, stored, tree);
  replay.tools = replayTools(
    toolsFor(entity, (member, _task, context) => replayMember(replay, member, context, tree)),
    replay,
  );
  const state = turnLoopStateOf(replay);
  for (;;) {
    const before = state.messages.length;
    let more: Message[] | undefined;
    try {
      await runTurnLoop(state);
      more = replay.afterAnswer(state.messages);
    } catch (error) {
      const { signal } = replay.controller;
      const reason: unknown = signal.aborted ? signal.reason : error;
      try {
        if (reason instanceof PauseSignal) {
          replay.afterPause(reason, state.messages);
          more = [];
        } else if (reason instanceof DivergenceFound || reason instanceof StoredHistoryEnded) {
          throw reason;
        } else {
          more = replay.afterError(reason, state.messages);
        }
      } catch (stop) {
        if (stop instanceof DivergenceFound) return stop;
        if (stop instanceof StoredHistoryEnded) return undefined;
        throw stop;
      }
    }
    if (more === undefined) return undefined;
    if (more.length === 0 && state.messages.length === before)
      return new DivergenceFound({
        turn: 0,
        message: `the replay stopped making progress at message ${before}`,
        runId: stored.run_id,
        entity: stored.entity.name,
      });
    state.messages.push(...more);
  }
}

/** A delegation the current team runs: its stored member run, replayed on the current member. */
async function replayMember(
  replay: RunReplay,
  member: Entity,
  context: ToolContext,
  tree: ReplayTree,
) {
  const stored = replay.memberRunOf(context.toolCallId);
  const found = stored && (await replayStoredRun(member, stored, tree));
  if (found) replay.stop(found);
  return replay.delegationResult(context.toolCallId, stored);
}

/** The entity's tools with each user tool's execution replaced by its stored result; the delegation tool stays real. */
function replayTools(
  tools: ReadonlyMap<string, ExecutableTool>,
  replay: RunReplay,
): Map<string, ExecutableTool> {
  return new Map(
    [...tools].map(([name, tool]) => [
      name,
      name === DELEGATE_TOOL_NAME
        ? tool
        : {
            ...tool,
            invoke: (_args: unknown, context: ToolContext) =>
              Promise.resolve().then(() =>
                replay.storedResult(context.toolCallId, context.idempotencyKey),
              ),
          },
    ]),
  );
}

/** The turn loop's state for a replay: the replay model, the replay's tools, a checkpointer that writes nothing. */
function turnLoopStateOf(replay: RunReplay): TurnLoopState {
  const { entity, stored } = replay;
  const messages = replay.startingMessages();
  return {
    runId: stored.run_id,
    epoch: 0,
    clock: SYSTEM_CLOCK,
    // Given the loop's own history: inputs the stored run took in between turns are added to it.
    model: new ReplayModel(() => replay.answerTurn(messages)),
    // The replay model reads no instructions.
    instructions: '',
    tools: replay.tools,
    maxTurns: entity.maxTurns,
    retry: DEFAULT_RETRY_POLICY,
    tenant: '',
    messages,
    usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
    checkpointer: replayCheckpointer(stored.run_id, stored.checkpoint),
    ...(entity.outputType && { output: outputCheckFor(entity.outputType) }),
    signal: replay.controller.signal,
    emit: () => undefined,
    actions: {
      list: () => Promise.resolve(replay.actionRecords()),
      consume: () => Promise.resolve(true),
    },
    memberPath: () => Promise.resolve([stored.entity.name]),
    // A replay has no spend: no request is ever over budget.
    budgetStop: budgetStopOf,
  };
}
