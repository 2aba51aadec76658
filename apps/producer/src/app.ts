import type { LiveSubscriber } from '@cairn/runtime';
import { Hono } from 'hono';
import { routePath } from 'hono/route';
import type { Logger } from 'pino';
import { adminOnly, apiKeyAuth, isAdminRequest } from './api-key-auth.js';
import { ApiKeyRing } from './api-keys.js';
import { bodyLimit } from './body-limit.js';
import { BrowserSessions } from './browser-session.js';
import { BULL_BOARD_PATH, bullBoard } from './bull-board.js';
import type { BoardQueue } from './bull-board.js';
import { toErrorResponse } from './http-errors.js';
import type { ProducerClient } from './producer-client.js';
import { pathGuard } from './path-guard.js';
import { ProducerMetrics, type AuthFailureReason } from './producer-metrics.js';
import { requestTracing } from './request-tracing.js';
import { runLimits, type RunLimits } from './run-limits.js';
import { SignInThrottle } from './sign-in-throttle.js';
import { eventRoutes } from './routes/event-routes.js';
import type { EventStreamOptions } from './routes/event-routes.js';
import { mcpRoutes, type McpOptions } from './mcp/mcp-routes.js';
import { healthRoutes } from './routes/health-routes.js';
import { openApiRoutes } from './routes/openapi-routes.js';
import type { HealthCheck } from './routes/health-routes.js';
import { runRoutes } from './routes/run-routes.js';
import { scheduleRoutes } from './routes/schedule-routes.js';
import { sessionRoutes } from './routes/session-routes.js';
import { webhookRoutes, type WebhookRoutesDeps } from './routes/webhook-routes.js';
import { suspendRoutes } from './routes/suspend-routes.js';
import { uiRoutes } from './ui/ui-routes.js';
import type { ScheduleService } from './schedule-service.js';
import { runScope } from './tenant-scope.js';
import { securityHeaders } from './security-headers.js';

/** Default largest request body, in bytes. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

/** Request limits of the API. */
export interface AppLimits extends Partial<RunLimits> {
  /**
   * Largest request body, in bytes; a larger one gets 413.
   * @defaultValue {@link DEFAULT_MAX_BODY_BYTES}
   */
  maxBodyBytes?: number;
}

/** What {@link createApp} wires together. */
export interface AppDeps {
  /** Enqueues, continues, cancels and reads runs: the routes' {@link ProducerClient} port (`ProducerService` in the producer). */
  client: ProducerClient;
  /** BullMQ queues shown in Bull Board and counted in `/metrics`. */
  queues: readonly BoardQueue[];
  /** Readiness probes by name (`postgres`, `redis`); `/readyz` is 503 when one fails. */
  healthChecks?: Readonly<Record<string, HealthCheck>>;
  /** Accepted bearer keys (`CAIRN_API_KEYS`): `key` (admin) or `tenant:key` (bound to a tenant); empty (and no read keys) means no auth. */
  apiKeys?: readonly string[];
  /** Bearer keys that may only read: GET and HEAD (`CAIRN_READ_API_KEYS`); anything else is 403. */
  readApiKeys?: readonly string[];
  /** `CAIRN_SESSION_SECRET`: signs browser sessions (see `ApiKeyRingOptions.sessionSecret`). @defaultValue derived from the keys */
  sessionSecret?: string;
  limits?: AppLimits;
  events?: EventStreamOptions;
  /** The runs' live channel (`createLiveSubscriber`): SSE `?include=deltas` forwards its live-only events. */
  live?: LiveSubscriber;
  /** Webhook endpoints (`PostgresWebhookStore`): `/v1/webhooks` and their page are served when given. */
  webhooks?: WebhookRoutesDeps;
  /** Schedules (`openSchedules`): `/v1/schedules` and their pages are served when given. */
  schedules?: ScheduleService;
  metrics?: ProducerMetrics;
  logger?: Logger;
  /** `/mcp`: how long its start tools wait for their run, and the base of run page links. */
  mcp?: McpOptions;
}

/**
 * The producer's HTTP API (docs/http-api.md) as a Hono app.
 *
 * @example
 * ```ts
 * const app = createApp({ client, queues: [backend.queue], healthChecks, apiKeys: config.apiKeys });
 * serve({ fetch: app.fetch, port: 3000 });
 * ```
 */
export function createApp(deps: AppDeps): Hono {
  const metrics =
    deps.metrics ??
    new ProducerMetrics({
      queues: deps.queues,
      countPausedRuns: () => deps.client.countRunsByStatus('PAUSED'),
    });
  const maxBodyBytes = deps.limits?.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const app = new Hono();

  app.use(securityHeaders());
  app.use(requestTracing());
  app.use(async (c, next) => {
    await next();
    metrics.recordRequest(c.req.method, routePath(c, -1), c.res.status);
  });
  const keys = new ApiKeyRing(deps.apiKeys ?? [], deps.readApiKeys ?? [], {
    sessionSecret: deps.sessionSecret,
  });
  const sessions = new BrowserSessions(keys, deps.client);
  const signInThrottle = new SignInThrottle();
  const onAuthFailure = (reason: AuthFailureReason) => metrics.recordAuthFailure(reason);
  // Before auth, which reads a form's CSRF field from the body: every body is bounded before anything reads it.
  app.use(bodyLimit(maxBodyBytes));
  app.use(apiKeyAuth(keys, sessions, { onFailure: onAuthFailure }));
  app.use(pathGuard());
  app.onError((error, c) => {
    const { status, body, headers } = toErrorResponse(error);
    if (status === 500)
      deps.logger?.error({ err: error, method: c.req.method, path: c.req.path }, 'request failed');
    return c.json(body, status, headers);
  });
  app.notFound((c) =>
    c.json({ error: 'not_found', message: `no route for ${c.req.method} ${c.req.path}` }, 404),
  );

  app.route(
    '/',
    healthRoutes({ checks: deps.healthChecks ?? {}, showsDetails: (c) => isAdminRequest(c, keys) }),
  );
  app.route('/', openApiRoutes());
  app.use(
    '/metrics',
    adminOnly("/metrics (every tenant's queue depth, paused runs and request counts)"),
  );
  app.get('/metrics', async (c) =>
    c.text(await metrics.render(), 200, { 'Content-Type': metrics.contentType }),
  );
  for (const path of [
    '/v1/runs/:run_id',
    '/v1/runs/:run_id/*',
    '/ui/runs/:run_id',
    '/ui/runs/:run_id/*',
  ]) {
    app.use(path, runScope(deps.client));
  }
  for (const path of [BULL_BOARD_PATH, `${BULL_BOARD_PATH}/*`])
    app.use(path, adminOnly('Bull Board'));
  app.route('/v1', runRoutes({ client: deps.client, metrics, limits: runLimits(deps.limits) }));
  app.route('/', mcpRoutes(deps.client, runLimits(deps.limits), deps.mcp));
  app.route('/v1', suspendRoutes(deps.client));
  app.route(
    '/v1',
    eventRoutes({
      client: deps.client,
      live: deps.live,
      options: deps.events,
      onStreamError: (error, runId) =>
        deps.logger?.error({ err: error, runId }, 'event stream failed'),
    }),
  );
  app.route('/v1', sessionRoutes(deps.client));
  if (deps.webhooks) app.route('/v1', webhookRoutes(deps.webhooks));
  if (deps.schedules) app.route('/v1', scheduleRoutes(deps.schedules, runLimits(deps.limits)));
  app.route(BULL_BOARD_PATH, bullBoard(deps.queues));
  app.route(
    '/ui',
    uiRoutes({
      client: deps.client,
      keys,
      sessions,
      liveText: deps.live !== undefined,
      signInThrottle,
      onAuthFailure,
      webhooks: deps.webhooks?.webhooks,
      schedules: deps.schedules,
    }),
  );
  return app;
}
