import { RunNotFoundError } from '@cairn/engine';
import type { SessionKey } from '@cairn/store';
import type { Context, MiddlewareHandler } from 'hono';
import { mayAccess, requestPrincipal } from './api-key-auth.js';
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
      if (runId !== undefined && owner && !mayAccess(principal, owner.tenantId))
        throw new RunNotFoundError(runId);
    }
    return next();
  };
}

/**
 * The session `sessionId` of the request's key: its tenant's (an admin key's: the no-tenant session). Sessions
 * are per tenant, so a route reads only this one and needs no scope check: another tenant's is another session.
 */
export function sessionKeyOf(c: Context, sessionId: string): SessionKey {
  return { tenantId: requestPrincipal(c).tenantId, sessionId };
}
