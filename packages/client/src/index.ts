/**
 * `@cairn/client`'s public surface, chosen on purpose: `createClient` and the
 * types of everything it takes and returns (runs, schedules, webhooks, the
 * event stream, the API's wire shapes), and the errors it throws. Each export
 * here is tagged `@public`; knip reports any other export of the entry, so
 * the package's own modules stay its own.
 */

/** @public */
export {
  createClient,
  type CairnClient,
  type CreateRunOptions,
  type CreateRunParams,
  type RunsApi,
  type WaitOptions,
} from './create-client.js';
/** @public Catch `CairnClientError` for any failure, `CairnApiError` for any error answer. */
export { CairnApiError, CairnClientError, type ErrorBody } from './errors.js';
/** @public The error answers by status (docs/http-api.md "Client library for apps"). */
export {
  BadRequest,
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
} from './errors.js';
/** @public */
export type { ClientOptions, RequestOptions } from './http-transport.js';
/** @public `EventStreamFailed`: `runs.events` gave up reconnecting. */
export {
  EventStreamFailed,
  type EventInclude,
  type ReconnectOptions,
  type RunEventsOptions,
} from './run-events.js';
/** @public */
export type {
  CreatedWebhookEndpoint,
  CreateWebhookParams,
  UpdateWebhookParams,
  WebhookAttempt,
  WebhookEndpoint,
  WebhookEventType,
  WebhooksApi,
} from './webhooks-api.js';
/** @public */
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
/** @public The producer API's wire shapes, as the client's methods take and return them. */
export type * from './types.js';
