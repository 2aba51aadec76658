import type { EntityKind, RunRecord } from '@cairn/engine';
import { RunNotFoundError } from '@cairn/engine';
import { Hono } from 'hono';
import { requestPrincipal } from '../api-key-auth.js';
import { createRunRequestOf } from '../create-run-request.js';
import { toPostedDecision } from '../posted-decision.js';
import { idempotencyKeyOf } from '../idempotency-key.js';
import { jsonBody } from '../json-body.js';
import type { ProducerClient } from '../producer-client.js';
import type { ProducerMetrics } from '../producer-metrics.js';
import {
  cancelRunBodySchema,
  continueRunBodySchema,
  createRunBodySchema,
  decisionsBodySchema,
  forkRunBodySchema,
} from '../request-schemas.js';
import { assertFieldsFit, assertSessionHasRoom, type RunLimits } from '../run-limits.js';
import { sessionKeyOf } from '../tenant-scope.js';

/** What {@link runRoutes} needs. */
export interface RunRoutesDeps {
  client: ProducerClient;
  metrics: ProducerMetrics;
  limits: RunLimits;
}

/** `POST /v1/{agents,teams}/:name/runs`, `GET /v1/runs/:run_id`, `POST /v1/runs/:run_id/{continue,fork,cancel,decisions}`. */
export function runRoutes({ client, metrics, limits }: RunRoutesDeps): Hono {
  const app = new Hono();

  const createRun = (kind: EntityKind) =>
    app.post(`/${kind}s/:name/runs`, async (c) => {
      const body = await jsonBody(c, createRunBodySchema);
      assertFieldsFit(body, limits);
      if (body.session_id !== undefined)
        await assertSessionHasRoom(client, sessionKeyOf(c, body.session_id), limits);
      const run = await client.enqueueRun(
        createRunRequestOf({ kind, name: c.req.param('name') }, body, {
          tenantId: requestPrincipal(c).tenantId,
          idempotencyKey: idempotencyKeyOf(c),
        }),
      );
      if (run.replayed) return c.json(runStatus(run), 200);
      metrics.recordEnqueue(kind, 'run');
      return c.json(runStatus(run), 202);
    });
  createRun('agent');
  createRun('team');

  app.get('/runs/:run_id', async (c) => {
    const runId = c.req.param('run_id');
    const run = await client.getRun(runId);
    if (!run) throw new RunNotFoundError(runId);
    return c.json(run);
  });

  app.post('/runs/:run_id/continue', async (c) => {
    const body = await jsonBody(c, continueRunBodySchema);
    assertFieldsFit(body, limits);
    // A fork joins its source's session: the run's tenant's, whichever key asks.
    if (body.fork)
      await assertSessionHasRoom(client, await client.runSession(c.req.param('run_id')), limits);
    const { deadline_ms: deadlineMs, ...rest } = body;
    const { action, run } = await client.continueRun(c.req.param('run_id'), {
      ...rest,
      deadlineMs,
    });
    if (action !== 'already-queued') metrics.recordEnqueue(run.entity.kind, action);
    return c.json({ ...runStatus(run), action }, 202);
  });

  app.post('/runs/:run_id/fork', async (c) => {
    const body = await jsonBody(c, forkRunBodySchema);
    assertFieldsFit(body, limits);
    const sourceId = c.req.param('run_id');
    // The fork joins the source's session, or the given one of the source's tenant.
    const sourceSession = await client.runSession(sourceId);
    if (!sourceSession) throw new RunNotFoundError(sourceId);
    await assertSessionHasRoom(
      client,
      body.session_id === undefined
        ? sourceSession
        : { ...sourceSession, sessionId: body.session_id },
      limits,
    );
    const { at } = body;
    const fork = await client.forkRun(sourceId, {
      ...(at && {
        at: 'checkpoint' in at ? { checkpoint: at.checkpoint } : { messageIndex: at.message_index },
      }),
      input: body.input,
      metadata: body.metadata,
      sessionId: body.session_id,
      deadlineMs: body.deadline_ms,
      idempotencyKey: idempotencyKeyOf(c),
    });
    if (!fork.replayed) metrics.recordEnqueue(fork.entity.kind, 'fork');
    return c.json({ ...runStatus(fork), forked_from: fork.forkedFrom }, fork.replayed ? 200 : 201);
  });

  app.post('/runs/:run_id/cancel', async (c) => {
    await jsonBody(c, cancelRunBodySchema);
    const run = await client.cancelRun(c.req.param('run_id'));
    return c.json({ ...runStatus(run), cancel_requested: true }, 202);
  });

  app.post('/runs/:run_id/decisions', async (c) => {
    const body = await jsonBody(c, decisionsBodySchema);
    const result = await client.decide(
      c.req.param('run_id'),
      body.decisions.map(toPostedDecision),
      { tenantId: requestPrincipal(c).tenantId },
    );
    return c.json(
      {
        applied: result.applied,
        already_decided: result.alreadyDecided,
        pending: result.pending,
        status: result.status,
      },
      200,
    );
  });

  return app;
}

function runStatus(run: RunRecord): { run_id: string; session_id: string; status: string } {
  return { run_id: run.runId, session_id: run.sessionId, status: run.status };
}
