import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A span as an OTLP/HTTP JSON export carries it, with its service. */
export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  startTimeUnixNano: string;
  attributes: Record<string, AttributeValue>;
  status: { code?: number; message?: string };
}

/** A local OTLP/HTTP trace receiver (`POST /v1/traces`, JSON), collecting the spans processes export to it. */
export interface OtlpReceiver {
  /** For `OTEL_EXPORTER_OTLP_ENDPOINT`. */
  readonly endpoint: string;
  readonly spans: ReceivedSpan[];
  close(): Promise<void>;
}

/** An attribute's value as a collector decodes it: a scalar or an array of them. */
type AttributeValue = string | number | boolean | AttributeValue[];

interface OtlpValue {
  arrayValue?: { values?: OtlpValue[] };
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
}

interface OtlpExport {
  resourceSpans?: {
    resource?: { attributes?: { key: string; value: OtlpValue }[] };
    scopeSpans?: {
      spans?: (Omit<ReceivedSpan, 'service' | 'attributes'> & {
        attributes?: { key: string; value: OtlpValue }[];
      })[];
    }[];
  }[];
}

function plain(value: OtlpValue): AttributeValue {
  if (value.arrayValue !== undefined) return (value.arrayValue.values ?? []).map(plain);
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  return value.boolValue ?? '';
}

/** Starts the receiver on a free port. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      if (req.url !== '/v1/traces' || !String(req.headers['content-type']).includes('json')) {
        res.writeHead(415).end();
        return;
      }
      const payload = JSON.parse(body) as OtlpExport;
      for (const resource of payload.resourceSpans ?? []) {
        const service = String(
          plain(resource.resource?.attributes?.find((a) => a.key === 'service.name')?.value ?? {}),
        );
        for (const scope of resource.scopeSpans ?? []) {
          for (const span of scope.spans ?? []) {
            const attributes = Object.fromEntries(
              (span.attributes ?? []).map((a) => [a.key, plain(a.value)]),
            );
            spans.push({
              ...span,
              parentSpanId: span.parentSpanId ?? '',
              service,
              attributes,
              status: span.status ?? {},
            });
          }
        }
      }
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The spans of one trace as an indented tree (name, service and the attributes that tell attempts and tools apart). */
export function spanTree(spans: readonly ReceivedSpan[]): string {
  const ids = new Set(spans.map((s) => s.spanId));
  const children = new Map<string, ReceivedSpan[]>();
  for (const span of spans) {
    const parent = ids.has(span.parentSpanId) ? span.parentSpanId : '';
    children.set(parent, [...(children.get(parent) ?? []), span]);
  }
  const lines: string[] = [];
  const walk = (parent: string, depth: number) => {
    const sorted = [...(children.get(parent) ?? [])].sort((a, b) =>
      BigInt(a.startTimeUnixNano) < BigInt(b.startTimeUnixNano) ? -1 : 1,
    );
    for (const span of sorted) {
      const a = span.attributes;
      const detail = [
        a['cairn.entity'],
        a['cairn.epoch'] !== undefined && `epoch ${a['cairn.epoch']}`,
        a['cairn.worker_id'] && `worker ${a['cairn.worker_id']}`,
        a['cairn.attempt.reason'],
        a['cairn.attempt.outcome'] ?? a['cairn.outcome'],
        a['gen_ai.tool.call.id'] && `call ${a['gen_ai.tool.call.id']}`,
        a['gen_ai.usage.input_tokens'] !== undefined &&
          `${a['gen_ai.usage.input_tokens']} in, ${a['gen_ai.usage.output_tokens']} out`,
      ].filter(Boolean);
      lines.push(
        `${'  '.repeat(depth)}${span.name} [${span.service}]${detail.length ? ` ${detail.join(', ')}` : ''}`,
      );
      walk(span.spanId, depth + 1);
    }
  };
  walk('', 0);
  return lines.join('\n');
}
