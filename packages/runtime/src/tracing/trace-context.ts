import { context, propagation, trace, type Context } from '@opentelemetry/api';

/**
 * The active trace context as BullMQ's job option `telemetry.metadata`
 * carries it (the W3C `traceparent`/`tracestate` carrier, as JSON), or
 * undefined when no span is active.
 */
export function currentTraceMetadata(): string | undefined {
  if (!trace.getSpanContext(context.active())) return undefined;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent ? JSON.stringify(carrier) : undefined;
}

/** The context a job's `telemetry.metadata` carries (the root context when it carries none). */
export function contextFromMetadata(metadata: string | undefined): Context {
  if (!metadata) return context.active();
  try {
    return propagation.extract(context.active(), JSON.parse(metadata) as Record<string, string>);
  } catch {
    return context.active();
  }
}
