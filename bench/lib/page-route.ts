import { createApp, type AppDeps } from '../../apps/producer/src/app.js';
import { medianFigure, type Figure } from './figure.js';
import { openClient } from './producer.js';
import type { BenchServices } from './services.js';
import { msSince } from './timing.js';

/** The run list routes timed whole: the overview and the first page, all runs and one status. */
const ROUTES = ['/ui', '/ui?status=COMPLETED'] as const;

/** Longer than pg's default idle timeout (10 s), after which a pool that keeps that default has closed its connections. */
const PAUSE_MS = 11_000;

/** The producer's Hono app on a bench database, loading a path whole. */
export interface ProducerApp {
  /** `GET path` through `app.request` (middleware, reads, rendering) with its body read: the ms it took and the body; throws on a status other than 200. */
  load(path: string): Promise<{ ms: number; body: string }>;
  close(): Promise<void>;
}

/**
 * The producer's Hono app (`createApp`) on a ProducerService of the database
 * at `databaseUrl`, with `events` as its SSE stream's options.
 */
export async function openProducerApp(
  databaseUrl: string,
  services: BenchServices,
  events?: AppDeps['events'],
): Promise<ProducerApp> {
  const redisUrl = await services.redisUrl();
  const client = await openClient({
    databaseUrl,
    backend: redisUrl ? 'redis' : 'postgres',
    redisUrl,
    queueName: `bench-pages-${Math.random().toString(36).slice(2, 8)}`,
  });
  const app = createApp({ client, queues: [client.runQueue.queue], events });
  return {
    async load(path) {
      const start = process.hrtime.bigint();
      const res = await app.request(path);
      const body = await res.text();
      if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${body.slice(0, 200)}`);
      return { ms: msSince(start), body };
    },
    close: () => client.close(),
  };
}

/**
 * `GET /ui` and `GET /ui?status=COMPLETED` through the producer's Hono app
 * (`app.request`: middleware, reads, rendering, the response's body read),
 * on a ProducerService of the database at `databaseUrl`: back to back
 * (`rounds` each, after one untimed), then `idleRounds` times each after an
 * {@link PAUSE_MS} pause, as a person's next page load comes.
 */
export async function pageRouteFigures(
  section: string,
  databaseUrl: string,
  services: BenchServices,
  rounds: number,
  idleRounds: number,
): Promise<Figure[]> {
  const app = await openProducerApp(databaseUrl, services);
  const load = async (path: string) => (await app.load(path)).ms;
  try {
    const figures: Figure[] = [];
    for (const path of ROUTES) {
      await load(path);
      const samples: number[] = [];
      for (let i = 0; i < rounds; i++) samples.push(await load(path));
      figures.push(
        medianFigure(section, `GET ${path}, whole route, back to back`, samples, 'ms', {
          goal: { op: '<=', bound: 50 },
          note: 'app.request: middleware, the list and overview reads, rendering, the body read',
        }),
      );
    }
    const idle: Record<string, number[]> = Object.fromEntries(ROUTES.map((p) => [p, []]));
    for (let i = 0; i < idleRounds; i++)
      for (const path of ROUTES) {
        await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
        idle[path]!.push(await load(path));
      }
    for (const path of ROUTES)
      figures.push(
        medianFigure(
          section,
          `GET ${path}, whole route, after ${PAUSE_MS / 1000} s idle`,
          idle[path]!,
          'ms',
          {
            goal: { op: '<=', bound: 50 },
            note: "each load after a pause past pg's default 10 s idle timeout",
          },
        ),
      );
    return figures;
  } finally {
    await app.close();
  }
}
