import { PrometheusMetrics, registerStateGauges, type MetricSources } from '@cairn/runtime';
import { Counter } from 'prom-client';

/** Why a request failed authentication, as `cairn_auth_failures_total` labels it. */
export const AUTH_FAILURE_REASONS = [
  'missing',
  'malformed_header',
  'bad_key',
  'bad_session',
  'csrf',
  'throttled',
] as const;

/** One of {@link AUTH_FAILURE_REASONS}. */
export type AuthFailureReason = (typeof AUTH_FAILURE_REASONS)[number];

/**
 * The producer's Prometheus metrics (prom-client): the state gauges every
 * Cairn process serves (queue depth by state, paused runs) and the HTTP
 * API's own counters. Run metrics are the workers' (they execute the runs).
 */
export class ProducerMetrics extends PrometheusMetrics {
  private readonly httpRequests: Counter<'method' | 'route' | 'status'>;
  private readonly runsEnqueued: Counter<'kind' | 'action'>;
  private readonly authFailures: Counter<'reason'>;

  constructor(sources: MetricSources = {}) {
    super();
    registerStateGauges(this.registry, sources);
    this.httpRequests = new Counter({
      name: 'cairn_http_requests_total',
      help: 'HTTP requests answered, by method, route and status.',
      labelNames: ['method', 'route', 'status'],
      registers: [this.registry],
    });
    this.runsEnqueued = new Counter({
      name: 'cairn_runs_enqueued_total',
      help: 'Runs put on the queue, by entity kind and action (run, resume, fork).',
      labelNames: ['kind', 'action'],
      registers: [this.registry],
    });
    this.authFailures = new Counter({
      name: 'cairn_auth_failures_total',
      help: 'Requests refused for their credentials, and sign-ins refused, by reason (missing, malformed_header, bad_key, bad_session, csrf, throttled).',
      labelNames: ['reason'],
      registers: [this.registry],
    });
    // Every reason shows from the start, at 0, so a rate over it needs no first failure.
    for (const reason of AUTH_FAILURE_REASONS) this.authFailures.inc({ reason }, 0);
  }

  /** Counts one answered HTTP request. */
  recordRequest(method: string, route: string, status: number): void {
    this.httpRequests.inc({ method, route, status: String(status) });
  }

  /** Counts one request or sign-in refused for its credentials. */
  recordAuthFailure(reason: AuthFailureReason): void {
    this.authFailures.inc({ reason });
  }

  /** Counts one run put on the queue (`action` is `run`, `resume` or `fork`). */
  recordEnqueue(kind: string, action: string): void {
    this.runsEnqueued.inc({ kind, action });
  }
}
