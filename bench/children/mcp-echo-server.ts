/**
 * The `mcp` bench section's MCP server (official SDK): one tool, `echo { text }`, answering its
 * text. Over stdio by default; with `--http`, Streamable HTTP on 127.0.0.1 (stateless, JSON
 * answers), printing `listening <url>` once it listens.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

function echoServer(): McpServer {
  const server = new McpServer({ name: 'bench-echo', version: '1.0.0' });
  server.registerTool(
    'echo',
    { description: 'Answers its text', inputSchema: { text: z.string() } },
    ({ text }) => ({ content: [{ type: 'text', text }] }),
  );
  return server;
}

if (process.argv.includes('--http')) {
  const http = createServer((req, res) => {
    const server = echoServer();
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    res.on('close', () => void server.close());
    void server.connect(transport).then(() => transport.handleRequest(req, res));
  });
  http.listen(0, '127.0.0.1', () => {
    const { port } = http.address() as AddressInfo;
    console.log(`listening http://127.0.0.1:${port}/mcp`);
  });
} else {
  await echoServer().connect(new StdioServerTransport());
}
