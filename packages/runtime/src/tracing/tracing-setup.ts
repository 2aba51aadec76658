import { trace, type Tracer } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { ChosenIdGenerator } from './chosen-ids.js';

/** A process's (or execution thread's) tracing: spans exported over OTLP/HTTP. */
export interface Tracing {
  tracer: Tracer;
  ids: ChosenIdGenerator;
  /** Exports what is buffered and stops. */
  shutdown(): Promise<void>;
}

/** Options of {@link startTracing}. */
export interface TracingOptions {
  /** `OTEL_EXPORTER_OTLP_ENDPOINT`: spans go to `<endpoint>/v1/traces`. */
  endpoint: string;
  /** The `service.name` resource attribute: `cairn-worker`, `cairn-producer`. */
  serviceName: string;
  /**
   * How long finished spans wait before they are sent, in ms: short, so a
   * worker killed with SIGKILL loses little.
   * @defaultValue 200
   */
  exportDelayMs?: number;
}

/**
 * Registers an OpenTelemetry tracer provider (AsyncLocalStorage context,
 * W3C trace context propagation) exporting over OTLP/HTTP.
 */
export function startTracing(options: TracingOptions): Tracing {
  const ids = new ChosenIdGenerator();
  const provider = new NodeTracerProvider({
    idGenerator: ids,
    resource: resourceFromAttributes({ 'service.name': options.serviceName }),
    spanProcessors: [
      new BatchSpanProcessor(
        new OTLPTraceExporter({ url: `${options.endpoint.replace(/\/+$/, '')}/v1/traces` }),
        {
          scheduledDelayMillis: options.exportDelayMs ?? 200,
        },
      ),
    ],
  });
  provider.register();
  return { tracer: trace.getTracer('cairn'), ids, shutdown: () => provider.shutdown() };
}
