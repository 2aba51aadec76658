export {
  createClient,
  type CairnClient,
  type CreateRunOptions,
  type CreateRunParams,
  type RunsApi,
  type WaitOptions,
} from './create-client.js';
export {
  BadRequest,
  CairnApiError,
  CairnClientError,
  Conflict,
  Forbidden,
  Gone,
  NotFound,
  PayloadTooLarge,
  PreconditionFailed,
  RunNotFound,
  ServerError,
  TooManyRequests,
  Unauthorized,
  Unprocessable,
  WaitTimeout,
  type ErrorBody,
} from './errors.js';
export type { ClientOptions, RequestOptions } from './http-transport.js';
export {
  EventStreamFailed,
  type EventInclude,
  type ReconnectOptions,
  type RunEventsOptions,
} from './run-events.js';
export { parseSse, type SseMessage } from './sse-parser.js';
export type {
  CreatedWebhookEndpoint,
  CreateWebhookParams,
  UpdateWebhookParams,
  WebhookAttempt,
  WebhookEndpoint,
  WebhookEventType,
  WebhooksApi,
} from './webhooks-api.js';
export type {
  CreateScheduleParams,
  Schedule,
  ScheduleDetail,
  ScheduleFiring,
  ScheduleOverlap,
  ScheduledRunFields,
  SchedulesApi,
  UpdateScheduleParams,
} from './schedules-api.js';
export type * from './types.js';
