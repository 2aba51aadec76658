import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { Hono } from 'hono';
import { requestPrincipal } from '../api-key-auth.js';
import type { ProducerClient } from '../producer-client.js';
import type { RunLimits } from '../run-limits.js';
import { cairnMcpServer } from './cairn-mcp-server.js';

/** The path Cairn serves MCP on (Streamable HTTP). */
export const MCP_PATH = '/mcp';

/** How long a start tool waits for its run by default and at most (docs/mcp.md). */
const DEFAULT_MCP_WAIT_MS = 20_000;

/** Options of {@link mcpRoutes}. */
export interface McpOptions {
  /**
   * How long a start tool waits for its run to end before answering with its run id and page.
   * @defaultValue {@link DEFAULT_MCP_WAIT_MS}
   */
  waitMs?: number;
  /**
   * How often a waiting start tool reads its run, in ms.
   * @defaultValue 200
   */
  pollMs?: number;
  /** The producer's address as people reach it (`CAIRN_PUBLIC_URL`), for run page links; unset: the request's origin. */
  publicUrl?: string;
}

/**
 * `POST /mcp`: Cairn as an MCP server over Streamable HTTP, stateless (no
 * session: any producer answers any request) behind the same keys as `/v1`
 * (a full key: every MCP message is a POST). An answer is JSON, or an SSE
 * stream when the request asks for progress (a `progressToken`), so that the
 * progress notifications can go before it.
 */
export function mcpRoutes(
  client: ProducerClient,
  limits: RunLimits,
  options: McpOptions = {},
): Hono {
  const wait = { boundMs: options.waitMs ?? DEFAULT_MCP_WAIT_MS, pollMs: options.pollMs ?? 200 };
  const app = new Hono();
  app.all(MCP_PATH, async (c) => {
    const base = (options.publicUrl ?? new URL(c.req.url).origin).replace(/\/+$/, '');
    const { request, parsedBody } = await readBody(c.req.raw);
    const server = cairnMcpServer({
      client,
      principal: requestPrincipal(c),
      entities: await client.servedEntities(),
      limits,
      wait,
      pageUrl: (runId) => `${base}/ui/runs/${encodeURIComponent(runId)}`,
      only: calledTool(parsedBody),
    });
    const streamed = asksProgress(parsedBody);
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: !streamed,
    });
    await server.connect(transport);
    const handled = parsedBody === undefined ? {} : { parsedBody };
    if (!streamed) {
      try {
        return await transport.handleRequest(request, handled);
      } finally {
        await server.close();
      }
    }
    // The stream outlives this handler: the server closes once the answer went out.
    const response = await transport.handleRequest(request, handled);
    const close = () => void server.close();
    if (!response.body) {
      close();
      return response;
    }
    const body = response.body.pipeThrough(new TransformStream({ flush: close }));
    return new Response(body, response);
  });
  return app;
}

/**
 * A POST's body read once and parsed; a body that is not JSON is handed back
 * unread in a copy of the request, for the transport's own parse error.
 */
async function readBody(raw: Request): Promise<{ request: Request; parsedBody?: unknown }> {
  if (raw.method !== 'POST') return { request: raw };
  const text = await raw.text();
  try {
    return { request: raw, parsedBody: JSON.parse(text) as unknown };
  } catch {
    return { request: new Request(raw, { body: text }) };
  }
}

/** The tool a body of one `tools/call` message calls. */
function calledTool(body: unknown): string | undefined {
  const message = body as { method?: unknown; params?: { name?: unknown } } | null | undefined;
  return message?.method === 'tools/call' && typeof message.params?.name === 'string'
    ? message.params.name
    : undefined;
}

/** True when a message of the body carries `params._meta.progressToken`. */
function asksProgress(body: unknown): boolean {
  const messages: unknown[] = Array.isArray(body) ? body : [body];
  return messages.some((message) => {
    const meta = (message as { params?: { _meta?: { progressToken?: unknown } } } | null)?.params
      ?._meta;
    return meta?.progressToken !== undefined;
  });
}
