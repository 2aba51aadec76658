import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { Hono } from 'hono';
import { requestPrincipal } from '../api-key-auth.js';
import type { ProducerClient } from '../producer-client.js';
import type { RunLimits } from '../run-limits.js';
import { cairnMcpServer } from './cairn-mcp-server.js';

/** The path Cairn serves MCP on (Streamable HTTP). */
export const MCP_PATH = '/mcp';

/**
 * `POST /mcp`: Cairn as an MCP server over Streamable HTTP, stateless (no
 * session: any producer answers any request) with JSON answers, behind the
 * same keys as `/v1` (a full key: every MCP message is a POST).
 */
export function mcpRoutes(client: ProducerClient, limits: RunLimits): Hono {
  const app = new Hono();
  app.all(MCP_PATH, async (c) => {
    const server = cairnMcpServer({
      client,
      principal: requestPrincipal(c),
      entities: await client.servedEntities(),
      limits,
    });
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    await server.connect(transport);
    try {
      return await transport.handleRequest(c.req.raw);
    } finally {
      await server.close();
    }
  });
  return app;
}
