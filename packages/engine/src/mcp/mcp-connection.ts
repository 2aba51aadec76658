import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  StdioClientTransport,
  getDefaultEnvironment,
} from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UserError } from '../errors.js';

/** An MCP server spawned as a child process, spoken to over its stdin and stdout. */
export interface McpStdioServer {
  command: string;
  args?: string[];
  /** Added to the small default environment the SDK gives the child (PATH, HOME, ...): the place for its secrets. */
  env?: Record<string, string>;
  cwd?: string;
}

/** An MCP server reached over Streamable HTTP. */
export interface McpHttpServer {
  url: string;
  /** Sent with every request, e.g. `{ Authorization: \`Bearer ${process.env.GITHUB_TOKEN}\` }`. */
  headers?: Record<string, string>;
}

/** Where an MCP server is. */
export type McpServerAddress = McpStdioServer | McpHttpServer;

/** The version Cairn announces itself with to MCP servers. */
const CLIENT_INFO = { name: 'cairn', version: '0.1.0' };

/** One connection per server per process, shared by every agent and run of that process. */
const connections = new Map<string, Promise<Client>>();

/**
 * The process's connection to a server, opened on first use: a stdio
 * server is spawned once per process (a worker's runs share it). A
 * connection that fails to open, or closes (a stdio server that died, an
 * HTTP server gone), is forgotten, so the next call opens a new one (a stdio
 * server is spawned again).
 */
export function mcpClientFor(server: McpServerAddress): Promise<Client> {
  const key = keyOf(server);
  const open = connections.get(key);
  if (open) return open;
  const opening = connect(server);
  connections.set(key, opening);
  const forget = () => {
    if (connections.get(key) === opening) connections.delete(key);
  };
  opening.then((client) => (client.onclose = forget), forget);
  return opening;
}

/**
 * How errors name a server: its command (stdio) or its URL without the query
 * and fragment, which may hold a key (an error becomes a stored tool result).
 */
export function mcpServerLabel(server: McpServerAddress): string {
  if ('command' in server) return [server.command, ...(server.args ?? [])].join(' ');
  const url = URL.canParse(server.url) ? new URL(server.url) : undefined;
  return url ? `${url.origin}${url.pathname}` : server.url;
}

/** Closes every MCP connection this process opened (a stdio server's process ends with it). */
export async function closeMcpClients(): Promise<void> {
  const open = [...connections.values()];
  connections.clear();
  await Promise.all(open.map(async (client) => (await client.catch(() => null))?.close()));
}

async function connect(server: McpServerAddress): Promise<Client> {
  const client = new Client(CLIENT_INFO);
  await client.connect(transportOf(server));
  return client;
}

function transportOf(server: McpServerAddress) {
  if ('command' in server) {
    return new StdioClientTransport({
      command: server.command,
      args: server.args ?? [],
      env: { ...getDefaultEnvironment(), ...server.env },
      ...(server.cwd !== undefined && { cwd: server.cwd }),
      stderr: 'inherit',
    });
  }
  let url: URL;
  try {
    url = new URL(server.url);
  } catch {
    throw new UserError(`MCP server url ${JSON.stringify(server.url)} is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new UserError(`MCP server url ${JSON.stringify(server.url)} must be http or https`);
  return new StreamableHTTPClientTransport(url, {
    requestInit: { headers: server.headers ?? {} },
    fetch: fetchOnOwnSignal,
  });
}

/**
 * `fetch` with a signal of each request's own that follows the one given. The
 * SDK's transport gives every request of a connection the same signal, and
 * Node's fetch adds an abort listener to it per request that only garbage
 * collection removes: a worker's long-lived connection gathered thousands (a
 * `MaxListenersExceededWarning` past 1,500 calls in the bench's `mcp` section).
 * `AbortSignal.any` follows the shared signal without a listener on it.
 */
function fetchOnOwnSignal(url: string | URL, init?: RequestInit): Promise<Response> {
  return fetch(url, init?.signal ? { ...init, signal: AbortSignal.any([init.signal]) } : init);
}

function keyOf(server: McpServerAddress): string {
  return 'command' in server
    ? JSON.stringify([
        'stdio',
        server.command,
        server.args ?? [],
        server.env ?? {},
        server.cwd ?? null,
      ])
    : JSON.stringify(['http', server.url, server.headers ?? {}]);
}
