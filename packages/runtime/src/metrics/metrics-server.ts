import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { PrometheusMetrics } from './prometheus-metrics.js';

/** A running `/metrics` endpoint. */
export interface MetricsServer {
  /** The port it listens on (the system's choice for port 0). */
  readonly port: number;
  close(): Promise<void>;
}

/** Serves `GET /metrics` (Prometheus text format) on `port`; any other path is a 404. */
export async function startMetricsServer(
  metrics: PrometheusMetrics,
  port: number,
  host?: string,
): Promise<MetricsServer> {
  const server: Server = createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res
        .writeHead(404, { 'Content-Type': 'text/plain' })
        .end('not found: metrics are at GET /metrics\n');
      return;
    }
    metrics.render().then(
      (text) => res.writeHead(200, { 'Content-Type': metrics.contentType }).end(text),
      (error: Error) =>
        res
          .writeHead(500, { 'Content-Type': 'text/plain' })
          .end(`metrics failed: ${error.message}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
