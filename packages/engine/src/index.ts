export * from './errors.js';
export * from './messages.js';
export * from './model.js';
export * from './run-types.js';
export * from './checkpoint-store.js';
export * from './events.js';
export {
  tool,
  jsonSchemaOf,
  DEFAULT_TOOL_TIMEOUT_MS,
  APPROVAL_TIMEOUT_OUTCOMES,
  type Tool,
  type ToolContext,
  type ToolOptions,
  type ExecutedToolOptions,
  type ExternalToolOptions,
  type ApprovalOptions,
  type ApprovalCheckContext,
  type ApprovalTimeoutOutcome,
  type NeedsApproval,
  type ResolvedApproval,
} from './tool.js';
export { Agent, DEFAULT_MAX_TURNS, type AgentOptions } from './agent.js';
export { Team, DELEGATE_TOOL_NAME, type TeamOptions } from './team.js';
export { Registry, type Entity } from './registry.js';
export { Engine, type EngineOptions, type CreateRunRequest, type ContinueRequest } from './engine.js';
export type { ExecuteOptions, ExecutionResult } from './runner/run-execution.js';
export type { ContinueDecision } from './runner/continue-policy.js';
export { DEFAULT_RETRY_POLICY, backoffDelay, type RetryPolicy } from './runner/model-retry.js';
export { idempotencyKeyFor } from './runner/execute-tool-batch.js';
export { OpenAIResponsesModel } from './models/openai-responses-model.js';
export { OpenAIChatModel } from './models/openai-chat-model.js';
export * from './hitl/pending-action.js';
