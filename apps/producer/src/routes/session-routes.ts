import { Hono } from 'hono';
import { NotFoundError } from '../errors.js';
import type { ProducerClient } from '../producer-client.js';

/** `GET /v1/sessions/:session_id`: the session and its runs; `DELETE`: the session and everything in it (204). */
export function sessionRoutes(client: ProducerClient): Hono {
  const app = new Hono();
  app.get('/sessions/:session_id', async (c) => {
    const sessionId = c.req.param('session_id');
    const session = await client.getSession(sessionId);
    if (!session) throw new NotFoundError(`session ${sessionId} not found`);
    return c.json(session);
  });
  app.delete('/sessions/:session_id', async (c) => {
    const sessionId = c.req.param('session_id');
    if (!(await client.deleteSession(sessionId))) throw new NotFoundError(`session ${sessionId} not found`);
    return c.body(null, 204);
  });
  return app;
}
