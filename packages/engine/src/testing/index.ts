export {
  ScriptedModel,
  toolResults,
  firstUserInput,
  type ScriptContext,
  type ScriptedReply,
  type ScriptedModelOptions,
} from './scripted-model.js';
export {
  startFakeOpenAIServer,
  type FakeOpenAIServer,
  type FakeOpenAIServerOptions,
  type FakeOpenAIRequest,
  type FakeStreaming,
} from './fake-openai-server.js';
export type { FakeOpenAIReply, FakeToolCall, FakeUsage } from './fake-openai-reply.js';
export type { FakeModelQuota, FakeQuota, FakeQuotaLedger } from './fake-openai-quota.js';
export { replayRun } from '../replay/replay-run.js';
export { RunFileError } from '../errors.js';
export {
  describeReplay,
  type ReplayResult,
  type ReplayDivergence,
} from '../replay/replay-result.js';
export { exportRun, type RunExportSource } from '../replay/export-run.js';
export { readRunFile } from '../replay/read-run-file.js';
export { printable, printableJson } from '../replay/printable.js';
export { parseRunExport, type RunExport, type ExportedRun } from '../replay/run-export.js';
