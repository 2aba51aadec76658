/**
 * `@cairn/engine/testing`: a scripted model, a fake OpenAI server, a test
 * clock, and a run's export and replay, for tests of agents and of apps built
 * on them.
 */

/** @public */
export {
  ScriptedModel,
  toolResults,
  firstUserInput,
  type ScriptContext,
  type ScriptedReply,
  type ScriptedModelOptions,
} from './scripted-model.js';
/** @public */
export {
  startFakeOpenAIServer,
  type FakeOpenAIServer,
  type FakeOpenAIServerOptions,
  type FakeOpenAIRequest,
  type FakeStreaming,
} from './fake-openai-server.js';
/** @public A clock a test moves (`EngineOptions.clock`): deadlines and expiries without waits. */
export { TestClock } from './test-clock.js';
/** @public What the fake OpenAI server answers with. */
export type { FakeOpenAIReply, FakeToolCall, FakeUsage } from './fake-openai-reply.js';
/** @public The fake OpenAI server's quota option and its ledger. */
export type { FakeModelQuota, FakeQuota, FakeQuotaLedger } from './fake-openai-quota.js';
export { replayRun } from '../replay/replay-run.js';
export { RunFileError } from '../errors.js';
/** @public */
export {
  describeReplay,
  type ReplayResult,
  type ReplayDivergence,
} from '../replay/replay-result.js';
export { exportRun, type RunExportSource } from '../replay/export-run.js';
export { readRunFile } from '../replay/read-run-file.js';
export { printable, printableJson } from '../replay/printable.js';
/** @public */
export { parseRunExport, type RunExport, type ExportedRun } from '../replay/run-export.js';
