import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { HonoAdapter } from '@bull-board/hono';
import { serveStatic } from '@hono/node-server/serve-static';
import { Hono } from 'hono';
import { trimTrailingSlash } from 'hono/trailing-slash';

/** A BullMQ `Queue`, as Bull Board takes it. */
export type BoardQueue = ConstructorParameters<typeof BullMQAdapter>[0];

/** Where Bull Board is mounted. */
export const BULL_BOARD_PATH = '/admin/queues';

/** Bull Board's UI and API for `queues`, to mount at {@link BULL_BOARD_PATH}; `/admin/queues/` redirects to `/admin/queues`. */
export function bullBoard(queues: readonly BoardQueue[]): Hono {
  const serverAdapter = new HonoAdapter(serveStatic).setBasePath(BULL_BOARD_PATH);
  createBullBoard({ queues: queues.map((queue) => new BullMQAdapter(queue)), serverAdapter });
  return new Hono().use(trimTrailingSlash()).route('/', serverAdapter.registerPlugin());
}
