import { Registry } from 'prom-client';

/** A set of Prometheus metrics on its own prom-client registry, rendered for a scrape. */
export class PrometheusMetrics {
  readonly registry = new Registry();

  /** The exposition text of every metric. */
  render(): Promise<string> {
    return this.registry.metrics();
  }

  /** The exposition format's content type. */
  get contentType(): string {
    return this.registry.contentType;
  }
}
