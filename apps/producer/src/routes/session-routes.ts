import { Hono } from 'hono';
import { NotFoundError } from '../errors.js';
import type { ProducerClient } from '../producer-client.js';
import { sessionKeyOf } from '../tenant-scope.js';

/**
 * `GET /v1/sessions/:session_id`: the session and its runs; `DELETE`: the session and everything in it (204).
 * Sessions are per tenant: the id names the key's tenant's session (an admin key's: the no-tenant one), so
 * another tenant's session of that id is never read, nor does it change the answer.
 */
export function sessionRoutes(client: ProducerClient): Hono {
  const app = new Hono();
  app.get('/sessions/:session_id', async (c) => {
    const key = sessionKeyOf(c, c.req.param('session_id'));
    const session = await client.getSession(key);
    if (!session) throw new NotFoundError(`session ${key.sessionId} not found`);
    return c.json(session);
  });
  app.delete('/sessions/:session_id', async (c) => {
    const key = sessionKeyOf(c, c.req.param('session_id'));
    if (!(await client.deleteSession(key)))
      throw new NotFoundError(`session ${key.sessionId} not found`);
    return c.body(null, 204);
  });
  return app;
}
