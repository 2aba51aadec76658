import type { Context } from 'hono';
import { Hono } from 'hono';

/** A readiness probe: resolves when the dependency answers, rejects otherwise. */
export type HealthCheck = () => Promise<unknown>;

/** What `/readyz` says of one dependency; why it failed is in `details`, for those who may see it. */
export type CheckState = 'ok' | 'unavailable';

/** What {@link healthRoutes} needs. */
export interface HealthRoutesDeps {
  /** Probes by name (`postgres`, `redis`). */
  checks: Readonly<Record<string, HealthCheck>>;
  /**
   * True when the request may see why a dependency failed (its error names
   * internal hosts and addresses): an admin key, or auth off.
   * @defaultValue every request
   */
  showsDetails?: (c: Context) => boolean;
  /**
   * How long one probe may take before it counts as failed, in ms.
   * @defaultValue 2000
   */
  timeoutMs?: number;
}

/**
 * `GET /healthz` (always 200) and `GET /readyz` (200 when every probe
 * answers, else 503 naming the failed ones as `unavailable`; with
 * `showsDetails`, `details` adds each failure's error).
 */
export function healthRoutes({
  checks,
  showsDetails = () => true,
  timeoutMs = 2_000,
}: HealthRoutesDeps): Hono {
  const app = new Hono();
  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  app.get('/readyz', async (c) => {
    const names = Object.keys(checks);
    const results = await Promise.all(names.map((name) => probe(checks[name]!, timeoutMs)));
    const report = Object.fromEntries(
      names.map((name, i): [string, CheckState] => [
        name,
        results[i] === undefined ? 'ok' : 'unavailable',
      ]),
    );
    const failures = names.flatMap((name, i) =>
      results[i] === undefined ? [] : [[name, results[i]] as const],
    );
    if (failures.length === 0) return c.json({ status: 'ok', checks: report });
    return c.json(
      {
        error: 'not_ready',
        message: `not ready: ${failures.map(([name]) => `${name} unavailable`).join(', ')}`,
        checks: report,
        ...(showsDetails(c) ? { details: Object.fromEntries(failures) } : {}),
      },
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
