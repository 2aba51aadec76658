import { trace, type Tracer } from '@opentelemetry/api';
import { ChosenIdGenerator } from './chosen-ids.js';

/** A process's (or execution thread's) tracing: spans exported over OTLP/HTTP. */
export interface Tracing {
  tracer: Tracer;
  ids: ChosenIdGenerator;
  /** Whether spans carry message content (`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`). */
  captureContent: boolean;
  /** Exports what is buffered and stops. */
  shutdown(): Promise<void>;
}

/** Options of {@link startTracing}. */
export interface TracingOptions {
  /** `OTEL_EXPORTER_OTLP_ENDPOINT`: spans go to `<endpoint>/v1/traces`. */
  endpoint: string;
  /** The `service.name` resource attribute: `cairn-worker`, `cairn-producer`. */
  serviceName: string;
  /** Record prompts, answers, tool arguments and results on spans (the GenAI conventions' opt-in). @defaultValue false */
  captureContent?: boolean;
  /**
   * How long finished spans wait before they are sent, in ms: short, so a
   * worker killed with SIGKILL loses little.
   * @defaultValue 200
   */
  exportDelayMs?: number;
}

/**
 * Registers an OpenTelemetry tracer provider (AsyncLocalStorage context,
 * W3C trace context propagation) exporting over OTLP/HTTP. The SDK is loaded
 * here, on use: a process without an endpoint never evaluates it (about a
 * fifth of an execution thread's code).
 */
export async function startTracing(options: TracingOptions): Promise<Tracing> {
  const { registerOtlpTracerProvider } = await import('./otlp-tracer-provider.js');
  const ids = new ChosenIdGenerator();
  const shutdown = registerOtlpTracerProvider({
    endpoint: options.endpoint,
    serviceName: options.serviceName,
    exportDelayMs: options.exportDelayMs ?? 200,
    ids,
  });
  return {
    tracer: trace.getTracer('cairn'),
    ids,
    captureContent: options.captureContent ?? false,
    shutdown,
  };
}
