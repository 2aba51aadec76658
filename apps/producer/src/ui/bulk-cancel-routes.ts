import { RunNotFoundError } from '@cairn/engine';
import { RunAlreadyTerminalError } from '@cairn/store';
import type { Context } from 'hono';
import { Hono } from 'hono';
import { requestPrincipal } from '../api-key-auth.js';
import { InvalidParameterError } from '../errors.js';
import { formBody } from '../form-body.js';
import type { ProducerClient } from '../producer-client.js';
import {
  BULK_CANCEL_ROUTE,
  MAX_BULK_CANCEL,
  bulkCancelConfirmPage,
  bulkCancelResultPage,
  type BulkCancelOutcome,
} from './bulk-cancel-page.js';
import type { Viewer } from './page-layout.js';
import { safeNextPath } from '../next-path.js';

/** What {@link bulkCancelRoutes} needs. */
export interface BulkCancelRoutesDeps {
  client: ProducerClient;
  /** Refuses a form posted from another site's page (throws); the CSRF token is checked before any route, when sign-in is on. */
  assertSameOrigin: (c: Context) => void;
  viewerOf: (c: Context) => Viewer;
}

/** How many cancels run at once: a running run's cancel waits for its worker (up to the producer's cancel grace). */
const CANCELS_AT_ONCE = 8;

/**
 * `POST /cancel-runs` under `/ui`: the run list's "Cancel selected". Without
 * `confirm=1` it cancels nothing and answers a page listing the selection to
 * confirm; with it, each run is cancelled by the producer's cancel (the
 * engine's `cancel` move, as `POST /v1/runs/:run_id/cancel`), and the page
 * says, run by run, what happened. A run of another tenant is "not found",
 * as the API's 404. At most {@link MAX_BULK_CANCEL} runs per request.
 */
export function bulkCancelRoutes({
  client,
  assertSameOrigin,
  viewerOf,
}: BulkCancelRoutesDeps): Hono {
  const app = new Hono();
  app.post(BULK_CANCEL_ROUTE, async (c) => {
    assertSameOrigin(c);
    await formBody(c);
    // The form is parsed once (above, or by the CSRF check); `all` reads every checked run_id, not the last.
    const form = await c.req.parseBody({ all: true });
    const runIds = selectedRunIds(form.run_id);
    const back = safeNextPath(typeof form.back === 'string' ? form.back : undefined);
    const tenantId = requestPrincipal(c).tenantId ?? undefined;
    // The runs this key may see: another tenant's id is not among them, whatever the form says.
    const visible = await client.listRuns({
      runIds,
      tenantId,
      topLevelOnly: false,
      limit: MAX_BULK_CANCEL,
    });
    const seen = new Set(visible.runs.map((run) => run.run_id));
    if (form.confirm !== '1') {
      const runs = runIds.flatMap((id) => visible.runs.filter((run) => run.run_id === id));
      const missing = runIds.filter((id) => !seen.has(id));
      return c.html(bulkCancelConfirmPage({ runs, missing }, back, viewerOf(c)));
    }
    const outcomes: BulkCancelOutcome[] = [];
    for (let i = 0; i < runIds.length; i += CANCELS_AT_ONCE) {
      const batch = runIds.slice(i, i + CANCELS_AT_ONCE);
      outcomes.push(
        ...(await Promise.all(
          batch.map((runId) =>
            seen.has(runId)
              ? cancelOne(client, runId)
              : Promise.resolve<BulkCancelOutcome>({ runId, outcome: 'not-found' }),
          ),
        )),
      );
    }
    return c.html(bulkCancelResultPage(outcomes, back, viewerOf(c)));
  });
  return app;
}

async function cancelOne(client: ProducerClient, runId: string): Promise<BulkCancelOutcome> {
  try {
    const run = await client.cancelRun(runId);
    return run.status === 'CANCELLED'
      ? { runId, outcome: 'cancelled' }
      : { runId, outcome: 'already-ended', status: run.status };
  } catch (error) {
    if (error instanceof RunNotFoundError) return { runId, outcome: 'not-found' };
    if (error instanceof RunAlreadyTerminalError)
      return { runId, outcome: 'already-ended', status: error.status };
    throw error;
  }
}

/** The form's run ids, each once, in order: at least one, at most {@link MAX_BULK_CANCEL}, else a 400 naming `run_id`. */
function selectedRunIds(raw: unknown): string[] {
  const values = (Array.isArray(raw) ? raw : raw === undefined ? [] : [raw]) as unknown[];
  const ids = [
    ...new Set(
      values.map((value) => {
        if (typeof value !== 'string' || value.trim() === '' || value.length > 200)
          throw new InvalidParameterError('run_id', 'each must be a run id');
        return value.trim();
      }),
    ),
  ];
  if (ids.length === 0)
    throw new InvalidParameterError('run_id', 'select at least one run to cancel');
  if (ids.length > MAX_BULK_CANCEL)
    throw new InvalidParameterError(
      'run_id',
      `at most ${MAX_BULK_CANCEL} runs per request (got ${ids.length}): cancel them in parts`,
    );
  return ids;
}
