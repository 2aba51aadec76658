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
