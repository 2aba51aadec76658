/**
 * The authoring API: agents, teams, tools, models, the registry and the
 * engine that runs them, with the run records, statuses, events and errors
 * their callers see. The store port (for `CheckpointStore` implementations)
 * is `@cairn/engine/store`; the lifecycle's moves and job intents that the
 * queue carries out are `@cairn/engine/lifecycle`; the scripted model and the
 * fake OpenAI server are `@cairn/engine/testing`.
 */
export {
  CairnError,
  UserError,
  RunNotFoundError,
  SessionNotFoundError,
  IdempotencyKeyReusedError,
  RunNotContinuableError,
  LeaseLostError,
  CheckpointWriteError,
  EntityNotFoundError,
  AmbiguousEntityError,
  EntityAwaitingDeployError,
  DefinitionChangedError,
  StoredStateError,
  AttemptsExhaustedError,
  StoreUnavailableError,
  MemberRunFailedError,
  ContinuePendingError,
  CancelRequestedError,
  SuspendRequestedError,
  ModelError,
  MaxTurnsExceededError,
  TooManyToolCallsError,
  DeadlineExceededError,
  DecisionError,
  ActionNotFoundError,
  DecisionConflictError,
  ActionExpiredError,
  ArgsDigestMismatchError,
  InvalidDecisionError,
  ApprovalTimeoutError,
} from './errors.js';
export type {
  Message,
  UserMessage,
  AssistantMessage,
  ToolResultMessage,
  ToolCallRequest,
  Usage,
  ModelUsage,
} from './messages.js';
export type { Model, ModelRequest, ModelResponse, ModelStreamDelta, ToolSpec } from './model.js';
export {
  CHECKPOINT_MODES,
  type CheckpointMode,
  type CheckpointRecord,
  type CreatedRun,
  type EntityKind,
  type EntityRef,
  type ForkedFrom,
  type RunErrorInfo,
  type RunRecord,
  type RunWaiting,
  type SuspendRequest,
  type ToolCallRecord,
  type ToolCallStatus,
} from './run-types.js';
export {
  RUN_STATUSES,
  CANCELLABLE_STATUSES,
  FINAL_STATUSES,
  IDLE_STATUSES,
  LIVE_STATUSES,
  FINISH_EVENT_TYPE,
  FINAL_EVENT_TYPES,
  isStatusIn,
  type RunStatus,
} from './lifecycle/run-status.js';
export {
  RUN_EVENT_TYPES,
  LIVE_EVENT_TYPES,
  type RunEvent,
  type RunEventType,
  type LiveEventType,
  type RunEventSink,
  type RunContent,
  type RunContentSink,
} from './events.js';
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
export { Agent, type AgentOptions } from './agent.js';
export { DEFAULT_MAX_TURNS, type EntityOptions } from './entity.js';
export { MAX_TOOL_CALLS_PER_TURN } from './runner/tool-call-cap.js';
export { Team, DELEGATE_TOOL_NAME, type TeamOptions } from './team.js';
export { Registry, type Entity } from './registry.js';
export { definitionHashOf } from './definition-hash.js';
export type { DefinitionChangePolicy } from './definition-change-policy.js';
export { memberEntityName, ownEntityName } from './entity-path.js';
export {
  Engine,
  DEFAULT_VERSION_GRACE_MS,
  type EngineOptions,
  type CreateRunRequest,
  type RunOptions,
  type RunResult,
} from './engine.js';
export { DEFAULT_MAX_ATTEMPTS } from './lifecycle/attempts-cap.js';
export {
  ON_ATTEMPTS_EXHAUSTED,
  SUSPEND_REASONS,
  type OnAttemptsExhausted,
  type SuspendReason,
} from './suspension.js';
export { MAX_DEADLINE_MS } from './deadline-ms.js';
export type { ContinueRequest } from './lifecycle/continue-run.js';
export { InvalidForkPointError, type ForkAt, type ForkRequest } from './lifecycle/fork-run.js';
export type { ExecuteOptions, ExecutionResult } from './lifecycle/execute-options.js';
export { DEFAULT_RETRY_POLICY, type RetryPolicy } from './runner/model-retry.js';
export { OpenAIResponsesModel } from './models/openai-responses-model.js';
export { OpenAIChatModel } from './models/openai-chat-model.js';
export {
  actionIdempotencyKey,
  digestArgs,
  type ActionDecision,
  type ActionKind,
  type ActionStatus,
  type DecisionType,
  type DecisionsResult,
  type NewPendingAction,
  type PendingActionRecord,
  type PostedDecision,
} from './hitl/pending-action.js';
export type {
  ModelCapacity,
  CapacityLimit,
  PermitRequest,
  Permit,
  PermitAnswer,
  PermitOutcome,
  RateLimitInfo,
  CapacitySnapshot,
} from './capacity/model-capacity.js';
export {
  parseModelLimits,
  mergeModelLimits,
  limitFor,
  type ModelLimit,
} from './capacity/model-limits.js';
export {
  ModelGate,
  DEFAULT_CAPACITY_WAIT_MS,
  type CapacitySettings,
} from './capacity/model-gate.js';
export {
  parseModelPrices,
  mergeModelPrices,
  priceFor,
  costMicroUsd,
  type ModelPrice,
  type ModelPrices,
} from './spend/model-prices.js';
export {
  usageView,
  sumUsage,
  usdOf,
  type UsageView,
  type ModelUsageView,
} from './spend/run-usage.js';
export { estimateRequestSpend, type RequestEstimate } from './spend/request-estimate.js';
export {
  BudgetExceededError,
  CapExceededError,
  DecisionForbiddenError,
  TenantBudgetExhaustedError,
} from './errors.js';
export {
  budgetOf,
  budgetLimitProblem,
  MAX_BUDGET_TOKENS,
  MAX_BUDGET_USD,
  MIN_BUDGET_USD,
  type Budget,
  type BudgetLimits,
  type BudgetOption,
} from './spend/budget-option.js';
export type { EntityCaps, EntityCapsOption } from './entity-caps.js';
export {
  parseTenantBudgets,
  TENANT_SPEND_REFRESH_MS,
  type TenantBudgets,
  type TenantBudgetActionArgs,
  type TenantDaySpend,
} from './spend/tenant-budget.js';
export type { BudgetActionArgs } from './spend/budget.js';
export {
  pauseMsOf,
  DEFAULT_CEILING_MEMORY_MS,
  DEFAULT_RATE_LIMIT_PAUSE_MS,
} from './capacity/rate-limit-pause.js';
