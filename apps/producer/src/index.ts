export { startProducer, type StartProducerOptions, type CairnProducer } from './start-producer.js';
export { createApp, DEFAULT_MAX_BODY_BYTES, type AppDeps, type AppLimits } from './app.js';
export {
  apiKeyAuth,
  BROWSER_PATH_PREFIXES,
  LOGIN_PATH,
  OPEN_PATH_PREFIXES,
  OPEN_PATHS,
  READ_METHODS,
} from './api-key-auth.js';
export { ApiKeyRing, type KeyAccess, type Principal } from './api-keys.js';
export {
  BrowserSessions,
  CSRF_COOKIE,
  CSRF_FIELD,
  CSRF_HEADERS,
  SESSION_COOKIE,
  SESSION_MAX_AGE_S,
  type BrowserSession,
  type IssuedSession,
} from './browser-session.js';
export { uiRoutes, type UiRoutesDeps } from './ui/ui-routes.js';
export { bullBoard, BULL_BOARD_PATH, type BoardQueue } from './bull-board.js';
export {
  ProducerError,
  FieldTooLongError,
  ForbiddenError,
  InvalidBodyError,
  InvalidJsonError,
  InvalidParameterError,
  NotFoundError,
  PayloadTooLargeError,
  RunWaitTimeoutError,
  TooManyRunsError,
  UnauthorizedError,
  UnsupportedMediaTypeError,
} from './errors.js';
export { assertSafeJson, MAX_JSON_DEPTH } from './json-safety.js';
export { pathGuard } from './path-guard.js';
export {
  DEFAULT_MAX_METADATA_CHARS,
  DEFAULT_MAX_RUNS_PER_SESSION,
  runLimits,
  type RunLimits,
} from './run-limits.js';
export { toErrorResponse, type ErrorBody, type ErrorResponse } from './http-errors.js';
export type { ContinueRunOptions, ContinueRunResult, ProducerClient } from './producer-client.js';
export {
  ProducerService,
  type ProducerServiceConfig,
  type ProducerServiceDeps,
} from './producer-service.js';
export { ProducerMetrics } from './producer-metrics.js';
export { readinessChecks } from './readiness-checks.js';
export {
  MAX_INPUT_LENGTH,
  cancelRunBodySchema,
  continueRunBodySchema,
  createRunBodySchema,
  type ContinueRunBody,
  type CreateRunBody,
} from './request-schemas.js';
export type { EventStreamOptions } from './routes/event-routes.js';
export type { HealthCheck } from './routes/health-routes.js';
