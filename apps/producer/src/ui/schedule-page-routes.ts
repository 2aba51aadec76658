import type { Context } from 'hono';
import { Hono } from 'hono';
import { requestPrincipal } from '../api-key-auth.js';
import { formBody } from '../form-body.js';
import { scheduleDetailJson, scheduleJson } from '../routes/schedule-routes.js';
import type { ScheduleService } from '../schedule-service.js';
import type { Viewer } from './page-layout.js';
import { scheduleListPage, schedulePage } from './schedule-pages.js';

/** What {@link schedulePageRoutes} needs. */
export interface SchedulePageRoutesDeps {
  schedules: ScheduleService;
  /** Refuses a form posted from another site's page (throws); the CSRF token is checked before any route, when sign-in is on. */
  assertSameOrigin: (c: Context) => void;
  viewerOf: (c: Context) => Viewer;
}

/** How many schedules the list page shows. */
const SCHEDULES_SHOWN = 200;

/**
 * The schedules' pages under `/ui`: `/schedules` (the key's schedules), `/schedules/:id` (one,
 * with its next and recent firings), and its Pause / Resume form (`POST /schedules/:id/pause`,
 * `/resume`: the API's PATCH `paused`), each scoped to the key's tenant like the API.
 */
export function schedulePageRoutes({
  schedules,
  assertSameOrigin,
  viewerOf,
}: SchedulePageRoutesDeps): Hono {
  const app = new Hono();
  const scope = (c: Context) => ({ tenantId: requestPrincipal(c).tenantId });

  app.get('/schedules', async (c) => {
    const listed = await schedules.list(scope(c), SCHEDULES_SHOWN);
    return c.html(scheduleListPage(listed.map(scheduleJson), viewerOf(c)));
  });

  app.get('/schedules/:schedule_id', async (c) => {
    const detail = await schedules.get(scope(c), c.req.param('schedule_id'));
    return c.html(schedulePage(scheduleDetailJson(detail), viewerOf(c)));
  });

  for (const [action, paused] of [
    ['pause', true],
    ['resume', false],
  ] as const)
    app.post(`/schedules/:schedule_id/${action}`, async (c) => {
      assertSameOrigin(c);
      await formBody(c);
      const id = c.req.param('schedule_id');
      await schedules.update(scope(c), id, { paused });
      return c.redirect(`/ui/schedules/${encodeURIComponent(id)}`, 303);
    });

  return app;
}
