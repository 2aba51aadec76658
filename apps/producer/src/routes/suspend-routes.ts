import type { RunRecord } from '@cairn/engine';
import { Hono } from 'hono';
import { jsonBody } from '../json-body.js';
import type { ProducerClient } from '../producer-client.js';
import { resumeRunBodySchema, suspendRunBodySchema } from '../request-schemas.js';

/** `POST /v1/runs/:run_id/suspend` and `POST /v1/runs/:run_id/resume`: an operator's suspend and resume. */
export function suspendRoutes(client: ProducerClient): Hono {
  const app = new Hono();

  app.post('/runs/:run_id/suspend', async (c) => {
    const body = await jsonBody(c, suspendRunBodySchema);
    const outcome = await client.suspendRun(c.req.param('run_id'), { now: body.now ?? false });
    return c.json(
      {
        ...runStatus(outcome.run),
        suspend: outcome.kind,
        action_id: outcome.kind === 'requested' ? null : outcome.actionId,
      },
      202,
    );
  });

  app.post('/runs/:run_id/resume', async (c) => {
    await jsonBody(c, resumeRunBodySchema);
    const outcome = await client.resumeRun(c.req.param('run_id'));
    return c.json(
      {
        ...runStatus(outcome.run),
        resumed: outcome.kind === 'resumed',
        action_id: outcome.actionId,
      },
      200,
    );
  });

  return app;
}

function runStatus(run: RunRecord): { run_id: string; session_id: string; status: string } {
  return { run_id: run.runId, session_id: run.sessionId, status: run.status };
}
