import { Hono } from 'hono';

/** A readiness probe: resolves when the dependency answers, rejects otherwise. */
export type HealthCheck = () => Promise<unknown>;

/** What {@link healthRoutes} needs. */
export interface HealthRoutesDeps {
  /** Probes by name (`postgres`, `redis`). */
  checks: Readonly<Record<string, HealthCheck>>;
  /**
   * How long one probe may take before it counts as failed, in ms.
   * @defaultValue 2000
   */
  timeoutMs?: number;
}

/** `GET /healthz` (always 200) and `GET /readyz` (200 when every probe answers, else 503 naming the failed ones). */
export function healthRoutes({ checks, timeoutMs = 2_000 }: HealthRoutesDeps): Hono {
  const app = new Hono();
  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  app.get('/readyz', async (c) => {
    const names = Object.keys(checks);
    const results = await Promise.all(names.map((name) => probe(checks[name]!, timeoutMs)));
    const report = Object.fromEntries(names.map((name, i) => [name, results[i] ?? 'ok']));
    const failed = names.filter((_, i) => results[i] !== undefined);
    if (failed.length === 0) return c.json({ status: 'ok', checks: report });
    return c.json(
      { error: 'not_ready', message: `not ready: ${failed.join(', ')} failed`, checks: report },
      503,
    );
  });
  return app;
}

/** Undefined when the check passed, else why it failed. */
async function probe(check: HealthCheck, timeoutMs: number): Promise<string | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`no answer within ${timeoutMs} ms`), timeoutMs);
  });
  try {
    return await Promise.race([check().then(() => undefined), timeout]);
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  } finally {
    clearTimeout(timer);
  }
}
