/** Something whose job counts `/metrics` reports: a BullMQ `Queue`. */
export interface CountedQueue {
  readonly name: string;
  getJobCounts(): Promise<Record<string, number>>;
}

type Labels = Record<string, string>;

/** The producer's Prometheus counters, rendered in the text exposition format (no client library). */
export class ProducerMetrics {
  private readonly httpRequests = new Map<string, { labels: Labels; value: number }>();
  private readonly runsEnqueued = new Map<string, { labels: Labels; value: number }>();

  /** Counts one answered HTTP request. */
  recordRequest(method: string, route: string, status: number): void {
    increment(this.httpRequests, { method, route, status: String(status) });
  }

  /** Counts one run put on the queue (`action` is `run`, `resume` or `fork`). */
  recordEnqueue(kind: string, action: string): void {
    increment(this.runsEnqueued, { kind, action });
  }

  /** The exposition text: job counts of every queue by state, then the counters. */
  async render(queues: readonly CountedQueue[]): Promise<string> {
    const lines: string[] = [
      '# HELP cairn_queue_up Whether the queue answered the job-count query.',
      '# TYPE cairn_queue_up gauge',
    ];
    const jobLines: string[] = [];
    for (const queue of queues) {
      try {
        const counts = await queue.getJobCounts();
        lines.push(sample('cairn_queue_up', { queue: queue.name }, 1));
        for (const [state, count] of Object.entries(counts)) {
          jobLines.push(sample('cairn_queue_jobs', { queue: queue.name, state }, count));
        }
      } catch {
        lines.push(sample('cairn_queue_up', { queue: queue.name }, 0));
      }
    }
    lines.push(
      '# HELP cairn_queue_jobs Jobs in the queue by state.',
      '# TYPE cairn_queue_jobs gauge',
      ...jobLines,
    );
    lines.push(
      '# HELP cairn_http_requests_total HTTP requests answered, by method, route and status.',
    );
    lines.push('# TYPE cairn_http_requests_total counter');
    for (const { labels, value } of this.httpRequests.values())
      lines.push(sample('cairn_http_requests_total', labels, value));
    lines.push(
      '# HELP cairn_runs_enqueued_total Runs put on the queue, by entity kind and action.',
    );
    lines.push('# TYPE cairn_runs_enqueued_total counter');
    for (const { labels, value } of this.runsEnqueued.values())
      lines.push(sample('cairn_runs_enqueued_total', labels, value));
    return `${lines.join('\n')}\n`;
  }
}

function increment(series: Map<string, { labels: Labels; value: number }>, labels: Labels): void {
  const key = JSON.stringify(labels);
  const entry = series.get(key);
  if (entry) entry.value += 1;
  else series.set(key, { labels, value: 1 });
}

function sample(name: string, labels: Labels, value: number): string {
  const body = Object.entries(labels)
    .map(
      ([k, v]) =>
        `${k}="${v.replaceAll('\\', '\\\\').replaceAll('"', '\\"').replaceAll('\n', '\\n')}"`,
    )
    .join(',');
  return `${name}{${body}} ${value}`;
}
