import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import type { MiddlewareHandler } from 'hono';
import { routePath } from 'hono/route';

/**
 * A server span per request, continuing the caller's W3C `traceparent`; the
 * request runs in its context, so a run it enqueues carries it to the worker.
 * Without a registered tracer provider (`OTEL_EXPORTER_OTLP_ENDPOINT` unset) spans are no-ops.
 */
export function requestTracing(): MiddlewareHandler {
  const tracer = trace.getTracer('cairn-producer');
  return async (c, next) => {
    const parent = propagation.extract(
      ROOT_CONTEXT,
      Object.fromEntries(c.req.raw.headers.entries()),
    );
    const span = tracer.startSpan(
      `${c.req.method} ${c.req.path}`,
      {
        kind: SpanKind.SERVER,
        attributes: { 'http.request.method': c.req.method, 'url.path': c.req.path },
      },
      parent,
    );
    try {
      await context.with(trace.setSpan(parent, span), next);
    } finally {
      span.updateName(`${c.req.method} ${routePath(c, -1)}`);
      span.setAttribute('http.response.status_code', c.res.status);
      if (c.res.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    }
  };
}
