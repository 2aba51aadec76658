import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import type { ChosenIdGenerator } from './chosen-ids.js';

/**
 * Registers an OpenTelemetry tracer provider (AsyncLocalStorage context,
 * W3C trace context propagation) whose spans, with `ids`' span ids, go to
 * `<endpoint>/v1/traces` over OTLP/HTTP after `exportDelayMs`. The
 * OpenTelemetry SDK lives in this module alone, which `startTracing` loads on
 * use. Returns the provider's shutdown.
 */
export function registerOtlpTracerProvider(options: {
  endpoint: string;
  serviceName: string;
  exportDelayMs: number;
  ids: ChosenIdGenerator;
}): () => Promise<void> {
  const provider = new NodeTracerProvider({
    idGenerator: options.ids,
    resource: resourceFromAttributes({ 'service.name': options.serviceName }),
    spanProcessors: [
      new BatchSpanProcessor(
        new OTLPTraceExporter({ url: `${options.endpoint.replace(/\/+$/, '')}/v1/traces` }),
        { scheduledDelayMillis: options.exportDelayMs },
      ),
    ],
  });
  provider.register();
  return () => provider.shutdown();
}
