/**
 * The authoring API: agents, teams, tools, models, the registry and the
 * engine that runs them, with the run records, statuses, events and errors
 * their callers see. The store port (for `CheckpointStore` implementations)
 * is `@cairn/engine/store`; the lifecycle's moves and job intents that the
 * queue carries out are `@cairn/engine/lifecycle`; the scripted model and the
 * fake OpenAI server are `@cairn/engine/testing`.
 */
/** @public The errors a run ends with, a tool's signal is aborted with, or a caller catches. */
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
/** @public */
export type {
  Message,
  UserMessage,
  AssistantMessage,
  ToolResultMessage,
  ToolCallRequest,
  Usage,
  ModelUsage,
} from './messages.js';
/** @public What a `Model` implementation takes and returns. */
export type { Model, ModelRequest, ModelResponse, ModelStreamDelta, ToolSpec } from './model.js';
export {
  CHECKPOINT_MODES,
  ENTITY_KINDS,
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
/** @public */
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
export { jsonSchemaOf, APPROVAL_TIMEOUT_OUTCOMES } from './tool.js';
/** @public */
export {
  tool,
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
/** @public */
export { Agent, type AgentOptions } from './agent.js';
/** @public */
export type { EntityOptions } from './entity.js';
export { MAX_TOOL_CALLS_PER_TURN } from './runner/tool-call-cap.js';
/** @public */
export { Team, type TeamOptions } from './team.js';
export { DELEGATE_TOOL_NAME } from './team.js';
/** @public */
export { Registry, type Entity } from './registry.js';
export { definitionHashOf } from './definition-hash.js';
/** @public An entity's `onDefinitionChange` option. */
export type { DefinitionChangePolicy } from './definition-change-policy.js';
export { memberEntityName, ownEntityName } from './entity-path.js';
export { DEFAULT_VERSION_GRACE_MS } from './engine.js';
/** @public */
export { Engine, type EngineOptions, type RunOptions, type RunResult } from './engine.js';
/** @public */
export type { CreateRunRequest } from './lifecycle/create-run.js';
export { DEFAULT_MAX_ATTEMPTS } from './lifecycle/attempts-cap.js';
export { ON_ATTEMPTS_EXHAUSTED, type OnAttemptsExhausted } from './suspension.js';
export { MAX_DEADLINE_MS } from './deadline-ms.js';
export type { ContinueRequest } from './lifecycle/continue-run.js';
/** @public */
export { InvalidForkPointError, type ForkAt, type ForkRequest } from './lifecycle/fork-run.js';
/** @public What `Engine.execute` takes and returns. */
export type { ExecuteOptions, ExecutionResult } from './lifecycle/execute-options.js';
export type { RetryPolicy } from './runner/model-retry.js';
export { OpenAIResponsesModel } from './models/openai-responses-model.js';
export { OpenAIChatModel } from './models/openai-chat-model.js';
export {
  actionIdempotencyKey,
  digestArgs,
  type ActionDecision,
  type ActionKind,
  type ActionStatus,
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
export { usageView, sumUsage, usdOf } from './spend/run-usage.js';
/** @public A run's usage as its record and the HTTP API show it. */
export type { UsageView, ModelUsageView } from './spend/run-usage.js';
export { estimateRequestSpend, type RequestEstimate } from './spend/request-estimate.js';
export {
  BudgetExceededError,
  CapExceededError,
  DecisionForbiddenError,
  TenantBudgetExhaustedError,
} from './errors.js';
export { budgetLimitProblem } from './spend/budget-option.js';
/** @public A budget's option and limits (docs/operations.md names the bounds). */
export {
  MAX_BUDGET_TOKENS,
  MAX_BUDGET_USD,
  MIN_BUDGET_USD,
  type Budget,
  type BudgetLimits,
  type BudgetOption,
} from './spend/budget-option.js';
/** @public An entity's `caps` option, and the caps it resolves to. */
export type { EntityCaps, EntityCapsOption } from './entity-caps.js';
export {
  parseTenantBudgets,
  TENANT_SPEND_REFRESH_MS,
  type TenantBudgets,
} from './spend/tenant-budget.js';
export { pauseMsOf, DEFAULT_CEILING_MEMORY_MS } from './capacity/rate-limit-pause.js';
export { requestPacing } from './capacity/request-pacing.js';
export { parkAgainFor } from './capacity/parked-pickup.js';
