import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { knowledgeBaseServer, type KnowledgeBaseLog } from './knowledge-base-server.js';

/** A knowledge-base MCP server over Streamable HTTP on 127.0.0.1, one session per client. */
export interface KnowledgeBaseHttp {
  url: string;
  log: KnowledgeBaseLog;
  /** The `Authorization` header of every request received. */
  authorizations: (string | undefined)[];
  close(): Promise<void>;
}

/** Starts a knowledge-base server on a free port. */
export async function startKnowledgeBaseHttp(): Promise<KnowledgeBaseHttp> {
  const log: KnowledgeBaseLog = { calls: [], cancelled: [] };
  const authorizations: (string | undefined)[] = [];
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const transportOf = async (req: IncomingMessage) => {
    const id = req.headers['mcp-session-id'];
    const known = typeof id === 'string' ? sessions.get(id) : undefined;
    if (known) return known;
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      onsessioninitialized: (session) => void sessions.set(session, transport),
    });
    await knowledgeBaseServer(log).connect(transport);
    return transport;
  };
  const http = createServer((req, res) => {
    authorizations.push(req.headers.authorization);
    void transportOf(req).then((transport) => transport.handleRequest(req, res));
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    log,
    authorizations,
    close: async () => {
      await Promise.all([...sessions.values()].map((t) => t.close()));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
