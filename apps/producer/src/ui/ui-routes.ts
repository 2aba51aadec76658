import { readFileSync } from 'node:fs';
import type { Context } from 'hono';
import { Hono } from 'hono';
import { getConnInfo } from '@hono/node-server/conninfo';
import { deleteCookie, setCookie } from 'hono/cookie';
import { html } from 'hono/html';
import { FINAL_STATUSES, RunNotFoundError } from '@cairn/engine';
import type { ApiKeyRing, Principal } from '../api-keys.js';
import { requestPrincipal } from '../api-key-auth.js';
import {
  CSRF_COOKIE,
  SESSION_COOKIE,
  SESSION_MAX_AGE_S,
  type BrowserSession,
  type BrowserSessions,
} from '../browser-session.js';
import { ForbiddenError } from '../errors.js';
import { formBody } from '../form-body.js';
import { integerParameter, STORED_INDEX } from '../integer-parameter.js';
import type { ProducerClient } from '../producer-client.js';
import type { AuthFailureReason } from '../producer-metrics.js';
import type { SignInThrottle } from '../sign-in-throttle.js';
import { capacityWaitMarks, checkpointMarks } from './attempt-timeline.js';
import { loginPage } from './login-page.js';
import { MESSAGES_PER_PAGE, messagePageNumber } from './message-pager.js';
import { OVERVIEW_ASSETS, type PageAsset } from './overview-assets.js';
import { pageLayout, type Viewer } from './page-layout.js';
import { bulkCancelRoutes } from './bulk-cancel-routes.js';
import { webhookPageRoutes } from './webhook-page-routes.js';
import type { WebhookAdmin } from '../routes/webhook-routes.js';
import { runListPage } from './run-list-page.js';
import { parseRunListQuery, runListFilter } from './run-list-query.js';
import { runPage } from './run-page.js';
import { schedulePageRoutes } from './schedule-page-routes.js';
import type { ScheduleService } from '../schedule-service.js';
import { attemptSpends } from './spend-notes.js';
import { mcpServersOf } from './tool-batches.js';
import { turnDetail, turnMessageRange } from './turn-detail.js';
import { safeNextPath } from '../next-path.js';
import { pageParameter } from './ui-query.js';
import { buildWaterfall, memberRunIds, WATERFALL_EVENT_TYPES } from './waterfall-model.js';

/** What {@link uiRoutes} needs. */
export interface UiRoutesDeps {
  client: ProducerClient;
  keys: ApiKeyRing;
  sessions: BrowserSessions;
  /** True when the event stream can include the live model text (`?include=deltas`): the producer has the live channel. */
  liveText: boolean;
  /** Counts failed sign-ins per client address: past its limit, sign-in answers 429. */
  signInThrottle: SignInThrottle;
  /** Called for each refused sign-in (`ProducerMetrics.recordAuthFailure`). */
  onAuthFailure?: (reason: AuthFailureReason) => void;
  /** Webhook endpoints: the `/ui/webhooks` page is served when given. */
  webhooks?: WebhookAdmin;
  /** Schedules: the `/ui/schedules` pages are served when given. */
  schedules?: ScheduleService;
}

/** The pages' script and styles, served from the producer itself (no CDN). */
const ASSETS: Readonly<Record<string, { body: string; type: string }>> = {
  'ui.js': { body: readAsset('ui.js'), type: 'text/javascript; charset=utf-8' },
  'ui.css': { body: readAsset('ui.css'), type: 'text/css; charset=utf-8' },
};

/**
 * The run pages, to mount at `/ui`: the run list, one page per run, sign-in
 * and sign-out, and their assets. Reads go through the client; the buttons
 * call the HTTP API from the page's script. Their security headers
 * (`PAGE_CONTENT_SECURITY_POLICY`) come from `securityHeaders`, in front of every route.
 */
export function uiRoutes({
  client,
  keys,
  sessions,
  liveText,
  signInThrottle,
  onAuthFailure,
  webhooks,
  schedules,
}: UiRoutesDeps): Hono {
  const app = new Hono();

  app.get('/assets/:file', (c) => {
    const file = c.req.param('file');
    const asset: PageAsset | undefined = ASSETS[file] ?? OVERVIEW_ASSETS[file];
    if (!asset) return c.text('no such asset', 404);
    return c.body(asset.body, 200, {
      'Content-Type': asset.type,
      'Cache-Control': asset.cacheControl ?? 'no-cache',
    });
  });

  app.get('/', async (c) => {
    const principal = requestPrincipal(c);
    const query = parseRunListQuery((name) => c.req.query(name), principal);
    const tenantId = principal.tenantId ?? undefined;
    const [list, overview] = await Promise.all([
      client.listRuns(runListFilter(query)),
      client.fleetOverview({ tenantId }),
    ]);
    return c.html(runListPage(query, list, viewerOf(c), overview));
  });

  app.route(
    '/',
    bulkCancelRoutes({
      client,
      assertSameOrigin: (c) => assertSameOrigin(c, 'bulk cancel'),
      viewerOf,
    }),
  );
  if (webhooks)
    app.route(
      '/',
      webhookPageRoutes({
        webhooks,
        assertSameOrigin: (c) => assertSameOrigin(c, 'redelivery'),
        viewerOf,
      }),
    );

  if (schedules)
    app.route(
      '/',
      schedulePageRoutes({
        schedules,
        assertSameOrigin: (c) => assertSameOrigin(c, 'schedule change'),
        viewerOf,
      }),
    );

  app.get('/runs/:run_id', async (c) => {
    const runId = c.req.param('run_id');
    const requestedPage = pageParameter('page', c.req.query('page'));
    // The run first, then its history's length, its own and its members' events at once, then the
    // message page. Read after the run, the events hold at least what its status says happened: a
    // run read COMPLETED comes with its last turn (a final page is not refreshed again).
    const run = await client.getRun(runId, { messages: false });
    if (!run) {
      return c.html(
        pageLayout(
          'Run not found',
          viewerOf(c),
          html`<h1>No run <code>${runId}</code></h1>
            <p><a href="/ui">All runs</a></p>`,
        ),
        404,
      );
    }
    const [first, ownStored, memberEvents, firing] = await Promise.all([
      client.listRunMessages(runId, { offset: 0, limit: 0 }),
      client.listEventsOfTypes(runId, [...WATERFALL_EVENT_TYPES, 'ToolCallStarted']),
      Promise.all(
        memberRunIds(run).map((id) => client.listEventsOfTypes(id, WATERFALL_EVENT_TYPES)),
      ),
      run.parent_run_id === null ? schedules?.firingOfRun(runId) : undefined,
    ]);
    const ownEvents = ownStored.filter((event) => event.type !== 'ToolCallStarted');
    const messagePage = messagePageNumber(first.total, requestedPage);
    const messages = await client.listRunMessages(runId, {
      offset: (messagePage - 1) * MESSAGES_PER_PAGE,
      limit: MESSAGES_PER_PAGE,
    });
    // The waterfall's turns and waits; the timeline's marks are the run's own.
    const events = [...ownEvents, ...memberEvents.flat()];
    const ofType = (type: string) =>
      events.filter((event) => event.runId === runId && event.type === type);
    const now = new Date();
    return c.html(
      runPage(
        {
          run,
          messages,
          messagePage,
          checkpoints: checkpointMarks(ofType('CheckpointCommitted')),
          capacityWaits: capacityWaitMarks(ofType('CapacityWait')),
          attemptSpends: attemptSpends(ofType('ModelRequestCompleted')),
          waterfall: buildWaterfall(run, events, now, !FINAL_STATUSES.includes(run.status)),
          mcpServers: mcpServersOf(ownStored),
          now,
          liveText,
          ...(firing && { firing }),
        },
        viewerOf(c),
      ),
    );
  });

  app.get('/runs/:run_id/turns/:index', async (c) => {
    const runId = c.req.param('run_id');
    const index = integerParameter('index', c.req.param('index'), STORED_INDEX);
    const from =
      c.req.query('from') === undefined
        ? index
        : integerParameter('from', c.req.query('from'), STORED_INDEX);
    const page = await client.listRunMessages(runId, turnMessageRange(index, from));
    if (page.total === 0 && !(await client.getRunStatus(runId))) throw new RunNotFoundError(runId);
    return c.html(
      pageLayout(
        `Run ${runId}: model turn ${index}`,
        viewerOf(c),
        html`<p><a href="/ui/runs/${encodeURIComponent(runId)}">← the run</a></p>
          ${turnDetail(runId, index, from, page)}`,
      ),
    );
  });

  app.get('/login', (c) => {
    const notice = !keys.enabled
      ? 'auth-off'
      : c.req.query('signed_out') === '1'
        ? 'signed-out'
        : 'none';
    return c.html(loginPage(safeNextPath(c.req.query('next')), notice));
  });

  app.post('/login', async (c) => {
    assertSameOrigin(c, 'sign-in');
    const form = await formBody(c);
    const next = safeNextPath(form.next);
    if (!keys.enabled) return c.redirect(next, 303);
    const attempt = signInThrottle.attempt(clientAddress(c));
    if (!attempt.allowed) {
      onAuthFailure?.('throttled');
      return c.html(loginPage(next, 'throttled'), 429, {
        'Retry-After': String(attempt.retryAfterS),
      });
    }
    const principal = typeof form.key === 'string' ? keys.find(form.key.trim()) : undefined;
    if (!principal) {
      onAuthFailure?.('bad_key');
      return c.html(loginPage(next, 'invalid-key'), 401);
    }
    attempt.succeeded();
    startSession(c, sessions, principal);
    return c.redirect(next, 303);
  });

  app.post('/logout', async (c) => {
    const session = c.get('browserSession') as BrowserSession | undefined;
    if (session) await sessions.revoke(session);
    deleteCookie(c, SESSION_COOKIE, { path: '/' });
    deleteCookie(c, CSRF_COOKIE, { path: '/' });
    return c.redirect(keys.enabled ? '/ui/login?signed_out=1' : '/ui', 303);
  });

  return app;
}

function viewerOf(c: Context): Viewer {
  const session = c.get('browserSession') as BrowserSession | undefined;
  return {
    principal: c.get('principal') as Principal | undefined,
    csrfToken: session?.csrfToken ?? '',
    signedIn: session !== undefined,
  };
}

/** The address of the connection the request came on (X-Forwarded-For is not trusted); `unknown` outside a Node server (`app.request`). */
function clientAddress(c: Context): string {
  try {
    return getConnInfo(c).remote.address ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

function startSession(c: Context, sessions: BrowserSessions, principal: Principal): void {
  const issued = sessions.issue(principal);
  const secure = isHttps(c);
  const common = { path: '/', sameSite: 'Strict', secure, maxAge: SESSION_MAX_AGE_S } as const;
  setCookie(c, SESSION_COOKIE, issued.cookieValue, { ...common, httpOnly: true });
  setCookie(c, CSRF_COOKIE, issued.csrfToken, common);
}

function isHttps(c: Context): boolean {
  return new URL(c.req.url).protocol === 'https:' || c.req.header('X-Forwarded-Proto') === 'https';
}

/** A form (`what`: sign-in, bulk cancel) posted from another site's page is refused (the browser names the page's origin). */
function assertSameOrigin(c: Context, what: string): void {
  const origin = c.req.header('Origin');
  if (origin === undefined) return;
  let host: string;
  try {
    host = new URL(origin).host;
  } catch {
    throw new ForbiddenError(`${what} refused: unreadable Origin header`);
  }
  if (host !== (c.req.header('Host') ?? new URL(c.req.url).host)) {
    throw new ForbiddenError(`${what} refused: the form was posted from another site`);
  }
}

function readAsset(name: string): string {
  // src/ui and dist/ui both sit two levels under apps/producer, beside assets/.
  return readFileSync(new URL(`../../assets/${name}`, import.meta.url), 'utf8');
}
