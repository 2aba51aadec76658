/**
 * The authoring API: agents, teams, tools, models, the registry and the
 * engine that runs them. The store port (for `CheckpointStore`
 * implementations) is `@cairn/engine/store`; the scripted model and the fake
 * OpenAI server are `@cairn/engine/testing`.
 */
export * from './errors.js';
export type { Message, UserMessage, AssistantMessage, ToolResultMessage, ToolCallRequest, Usage } from './messages.js';
export type { Model, ModelRequest, ModelResponse, ModelStreamDelta, ToolSpec } from './model.js';
export * from './run-types.js';
export * from './lifecycle/index.js';
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
export { Agent, DEFAULT_CHECKPOINT_MODE, DEFAULT_MAX_TURNS, type AgentOptions } from './agent.js';
export { Team, DELEGATE_TOOL_NAME, type TeamOptions } from './team.js';
export { Registry, type Entity } from './registry.js';
export { definitionHashOf, DEFINITION_HASH_LENGTH } from './definition-hash.js';
export { DEFINITION_CHANGE_POLICIES, type DefinitionChangePolicy } from './definition-change-policy.js';
export { ENTITY_PATH_SEPARATOR, entityPathSegments, isEntityPath, memberEntityName, ownEntityName, runEntityPath } from './entity-path.js';
export type { EntityCatalog, EntityInfo } from './entity-catalog.js';
export { Engine, DEFAULT_VERSION_GRACE_MS, type EngineOptions, type CreateRunRequest, type RunOptions, type RunResult } from './engine.js';
export { DEFAULT_MAX_ATTEMPTS } from './lifecycle/attempts-cap.js';
export type { ContinueRequest } from './lifecycle/continue-run.js';
export type { ExecuteOptions, ExecutionResult } from './lifecycle/execute-options.js';
export { DEFAULT_RETRY_POLICY, type RetryPolicy } from './runner/model-retry.js';
export { OpenAIResponsesModel } from './models/openai-responses-model.js';
export { OpenAIChatModel } from './models/openai-chat-model.js';
export * from './hitl/pending-action.js';
