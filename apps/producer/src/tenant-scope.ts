import { RunNotFoundError } from '@cairn/engine';
import type { MiddlewareHandler } from 'hono';
import { mayAccess, requestPrincipal } from './api-key-auth.js';
import { NotFoundError } from './errors.js';
import type { ProducerClient } from './producer-client.js';

/**
 * For routes under `/runs/:run_id`: a tenant asking for another tenant's run gets the same 404 as for a run
 * that does not exist, so it learns nothing of it. Admins pass without a read.
 */
export function runScope(client: ProducerClient): MiddlewareHandler {
  return async (c, next) => {
    const principal = requestPrincipal(c);
    if (principal.tenantId !== null) {
      const runId = c.req.param('run_id');
      const owner = runId === undefined ? undefined : await client.runOwner(runId);
      if (runId !== undefined && owner && !mayAccess(principal, owner.tenantId)) throw new RunNotFoundError(runId);
    }
    return next();
  };
}

/** For routes under `/sessions/:session_id`: another tenant's session is a 404, as one that does not exist. */
export function sessionScope(client: ProducerClient): MiddlewareHandler {
  return async (c, next) => {
    const principal = requestPrincipal(c);
    if (principal.tenantId !== null) {
      const sessionId = c.req.param('session_id');
      const owner = sessionId === undefined ? undefined : await client.sessionOwner(sessionId);
      if (sessionId !== undefined && owner && !mayAccess(principal, owner.tenantId)) {
        throw new NotFoundError(`session ${sessionId} not found`);
      }
    }
    return next();
  };
}
