import { PrometheusMetrics, registerStateGauges, type MetricSources } from '@cairn/queue';
import { Counter } from 'prom-client';

/**
 * The producer's Prometheus metrics (prom-client): the state gauges every
 * Cairn process serves (queue depth by state, paused runs) and the HTTP
 * API's own counters. Run metrics are the workers' (they execute the runs).
 */
export class ProducerMetrics extends PrometheusMetrics {
  private readonly httpRequests: Counter<'method' | 'route' | 'status'>;
  private readonly runsEnqueued: Counter<'kind' | 'action'>;

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
  }

  /** Counts one answered HTTP request. */
  recordRequest(method: string, route: string, status: number): void {
    this.httpRequests.inc({ method, route, status: String(status) });
  }

  /** Counts one run put on the queue (`action` is `run`, `resume` or `fork`). */
  recordEnqueue(kind: string, action: string): void {
    this.runsEnqueued.inc({ kind, action });
  }
}
