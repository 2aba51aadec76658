/**
 * A small MCP server for the tests, built on the official SDK: `lookup`
 * answers from a fixed knowledge base, `fail` answers `isError`, `wait`
 * holds until its request is cancelled (or its server dies), `whoami` names the serving process.
 * Every call it receives is recorded with its `_meta`, and every cancelled
 * one by its request id, in {@link KnowledgeBaseLog}.
 */
import { appendFileSync, writeFileSync } from 'node:fs';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';

/** What a knowledge-base server saw. */
export interface KnowledgeBaseLog {
  calls: { tool: string; args: Record<string, unknown>; meta: Record<string, unknown> }[];
  cancelled: string[];
}

/** How a knowledge-base server behaves beyond its log. */
export interface KnowledgeBaseOptions {
  /** A file each `lookup` appends its `_meta` idempotency key and epoch to, a line each. */
  ledger?: string;
  /** A `lookup` of a topic ending in " 2" under this epoch never answers (a run's worker is then SIGKILLed mid-run). */
  stallEpoch?: number;
}

/** A new knowledge-base MCP server writing into `log`. */
export function knowledgeBaseServer(
  log: KnowledgeBaseLog,
  options: KnowledgeBaseOptions = {},
): McpServer {
  const server = new McpServer({ name: 'knowledge-base', version: '1.0.0' });
  const record = (tool: string, args: Record<string, unknown>, meta: unknown) =>
    log.calls.push({ tool, args, meta: (meta ?? {}) as Record<string, unknown> });
  server.registerTool(
    'lookup',
    {
      description: 'Looks a topic up in the knowledge base',
      inputSchema: { topic: z.string().min(1) },
    },
    ({ topic }, extra) => {
      record('lookup', { topic }, extra._meta);
      const meta = extra._meta ?? {};
      const [key, epoch] = [meta['cairn/idempotency-key'], meta['cairn/epoch']];
      if (options.ledger !== undefined) appendFileSync(options.ledger, `${key}\t${epoch}\n`);
      if (epoch === options.stallEpoch && topic.endsWith(' 2')) return new Promise<never>(() => {});
      return { content: [{ type: 'text', text: `kb: ${topic} are stacked stones` }] };
    },
  );
  server.registerTool(
    'fail',
    { description: 'Always fails', inputSchema: { why: z.string() } },
    ({ why }, extra) => {
      record('fail', { why }, extra._meta);
      return { content: [{ type: 'text', text: `refused: ${why}` }], isError: true };
    },
  );
  server.registerTool(
    'wait',
    {
      description: 'Waits until cancelled; writes the file `mark` names once it waits',
      inputSchema: { mark: z.string().optional() },
    },
    ({ mark }, extra) => {
      record('wait', {}, extra._meta);
      if (mark !== undefined) writeFileSync(mark, String(process.pid));
      return new Promise((_resolve, reject) => {
        extra.signal.addEventListener('abort', () => {
          log.cancelled.push(String(extra.requestId));
          reject(new Error('cancelled'));
        });
      });
    },
  );
  server.registerTool(
    'whoami',
    { description: 'Names the process serving the call', inputSchema: {} },
    () => ({ content: [{ type: 'text', text: `pid ${process.pid}` }] }),
  );
  return server;
}
