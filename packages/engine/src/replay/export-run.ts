import type { CheckpointStore } from '../checkpoint-store.js';
import { RunNotFoundError } from '../errors.js';
import type { RunRecord } from '../run-types.js';
import {
  RUN_EXPORT_SCHEMA,
  RUN_EXPORT_VERSION,
  type ExportedRun,
  type RunExport,
} from './run-export.js';

/** What {@link exportRun} reads of a store: the port's reads, nothing else. */
export type RunExportSource = Pick<
  CheckpointStore,
  'getRun' | 'loadHistory' | 'listChildRuns' | 'listRunActions'
>;

/**
 * A stored run as a run file: its history, tool calls and pending actions,
 * and those of every member run under it. Throws `RunNotFoundError`.
 *
 * @example
 * ```ts
 * const file = await exportRun(store, runId);
 * await writeFile('run.json', JSON.stringify(file, null, 2));
 * ```
 */
export async function exportRun(store: RunExportSource, runId: string): Promise<RunExport> {
  const run = await store.getRun(runId);
  if (!run) throw new RunNotFoundError(runId);
  const members: ExportedRun[] = [];
  const addMembersOf = async (parent: RunRecord): Promise<void> => {
    for (const child of await store.listChildRuns(parent.runId)) {
      members.push(await exportedRun(store, child));
      await addMembersOf(child);
    }
  };
  await addMembersOf(run);
  return {
    schema: RUN_EXPORT_SCHEMA,
    schema_version: RUN_EXPORT_VERSION,
    exported_at: new Date().toISOString(),
    run: await exportedRun(store, run),
    members,
  };
}

async function exportedRun(store: RunExportSource, run: RunRecord): Promise<ExportedRun> {
  const [history, actions] = await Promise.all([
    store.loadHistory(run.runId),
    store.listRunActions(run.runId),
  ]);
  return {
    run_id: run.runId,
    parent_run_id: run.parentRunId,
    parent_tool_call_id: run.parentToolCallId,
    entity: { ...run.entity },
    status: run.status,
    checkpoint: run.checkpoint,
    input: run.input,
    content: run.content,
    definition_hash: run.definitionHash,
    messages: history.messages,
    tool_calls: history.toolCalls.map((call) => ({
      tool_call_id: call.toolCallId,
      name: call.name,
      args: call.args,
      result: call.result,
      status: call.status,
      batch: call.batch,
      child_run_id: call.childRunId,
    })),
    actions: actions.map((action) => ({
      action_id: action.actionId,
      kind: action.kind,
      tool_call_id: action.toolCallId,
      tool: action.tool,
      args: action.args,
      batch: action.batch,
      status: action.status,
      decision: action.decision,
      decided_at: action.decidedAt?.toISOString() ?? null,
    })),
  };
}
