import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { closeMcpClients, mcpTools, type McpServerAddress } from '@cairn/engine/mcp';
import type { Tool } from '@cairn/engine';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createApp } from '../../apps/producer/src/app.js';
import { alternate } from '../lib/alternate.js';
import { BENCH_AGENT } from '../lib/bench-registry.js';
import { REPO_ROOT, tsNodeArgs } from '../lib/child.js';
import { medianFigure, ratioFigure, type Figure } from '../lib/figure.js';
import { openClient } from '../lib/producer.js';
import type { Section } from '../lib/section.js';
import { RUN_INPUT } from '../lib/workload.js';

const ID = 'mcp';
const ECHO_SERVER = 'bench/children/mcp-echo-server.ts';
const RATIO_GOAL = { op: '<=', bound: 1.2 } as const;
const TEXT = 'a cairn marks the trail';

/**
 * MCP both ways (docs/mcp.md). A tool call through `mcpTools` (its
 * arguments checked against the server's schema, `_meta` with the
 * idempotency key and epoch, the answer's text) against the same call made
 * directly with the SDK's client, to the same echo server over stdio and
 * over Streamable HTTP; and a run started through `/mcp`'s start tool
 * against `POST /v1/agents/:name/runs`, both through the producer's app.
 * Each pair alternates round by round; ratios are of medians.
 */
export const mcpSection: Section = {
  id: ID,
  title: 'MCP: tool calls through mcpTools, runs started through /mcp',
  cairn: true,
  async run({ quick, services, log }) {
    const rounds = quick ? 300 : 3000;
    const warmup = quick ? 50 : 300;
    const figures: Figure[] = [];
    const http = await startHttpEchoServer();
    try {
      const servers: [string, () => McpServerAddress][] = [
        [
          'stdio',
          () => ({ command: process.execPath, args: tsNodeArgs(ECHO_SERVER), cwd: REPO_ROOT }),
        ],
        ['HTTP', () => ({ url: http.url })],
      ];
      for (const [transport, address] of servers) {
        log(`tool calls over ${transport}: ${rounds} rounds each way`);
        const [echo] = await mcpTools({ server: address(), include: ['echo'] });
        // One connection (over stdio, one server process) per variant: each gets one call a round.
        const direct = await directClient(address());
        const directAsCairn = await directClient(address());
        const samples = await alternate(
          [
            { name: 'mcpTools', prepare: async () => {}, commit: () => callThroughCairn(echo!) },
            { name: 'SDK client', prepare: async () => {}, commit: () => callDirect(direct) },
            {
              name: 'SDK client, signal and _meta',
              prepare: async () => {},
              commit: () => callDirect(directAsCairn, true),
            },
          ],
          rounds,
          warmup,
        );
        await Promise.all([direct.close(), directAsCairn.close()]);
        figures.push(
          medianFigure(ID, `tool call over ${transport} through mcpTools`, samples[0]!, 'ms'),
          medianFigure(ID, `tool call over ${transport} with the SDK client`, samples[1]!, 'ms'),
          medianFigure(
            ID,
            `tool call over ${transport} with the SDK client, a signal and _meta as mcpTools sends`,
            samples[2]!,
            'ms',
          ),
          ratioFigure(
            ID,
            `tool call over ${transport}: mcpTools / SDK client, p50`,
            samples[0]!,
            samples[1]!,
            {
              goal: RATIO_GOAL,
              sides: 'ms',
            },
          ),
        );
      }
    } finally {
      await closeMcpClients();
      http.child.kill('SIGTERM');
    }

    const starts = quick ? 200 : 1000;
    log(`runs started: ${starts} rounds each way`);
    const database = await services.database(ID);
    const redisUrl = await services.redisUrl();
    const client = await openClient({
      databaseUrl: database.url,
      backend: redisUrl ? 'redis' : 'postgres',
      redisUrl,
      queueName: `bench-mcp-${Math.random().toString(36).slice(2, 8)}`,
    });
    try {
      const app = createApp({ client, queues: [client.runQueue.queue] });
      const post = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
        const res = await app.request(path, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', ...headers },
          body: JSON.stringify(body),
        });
        const text = await res.text();
        if (res.status >= 300 || text.includes('"isError":true'))
          throw new Error(`POST ${path}: ${res.status} ${text.slice(0, 300)}`);
      };
      let id = 0;
      const samples = await alternate(
        [
          {
            name: '/mcp',
            prepare: async () => {},
            commit: () =>
              post(
                '/mcp',
                {
                  jsonrpc: '2.0',
                  id: ++id,
                  method: 'tools/call',
                  params: {
                    name: `start_agent_${BENCH_AGENT}`,
                    arguments: { input: RUN_INPUT, wait_ms: 0 },
                  },
                },
                { Accept: 'application/json, text/event-stream' },
              ),
          },
          {
            name: 'POST /v1',
            prepare: async () => {},
            commit: () => post(`/v1/agents/${BENCH_AGENT}/runs`, { input: RUN_INPUT }),
          },
        ],
        starts,
        quick ? 20 : 100,
      );
      figures.push(
        medianFigure(ID, `run started with /mcp start_agent_${BENCH_AGENT}`, samples[0]!, 'ms'),
        medianFigure(ID, `run started with POST /v1/agents/${BENCH_AGENT}/runs`, samples[1]!, 'ms'),
        ratioFigure(ID, 'run start: /mcp / POST /v1, p50', samples[0]!, samples[1]!, {
          goal: RATIO_GOAL,
          sides: 'ms',
        }),
      );
    } finally {
      await client.close();
    }
    return {
      figures,
      notes: [
        `tool calls: an echo tool of an SDK-built server (${ECHO_SERVER}), its stdio process spawned once per client (one per variant) and its HTTP process shared; mcpTools' side is the tool's parameters.parse then execute, as the batch executor calls them (without the checkpoint, which the checkpoint section measures); the SDK side is client.callTool and reading its text block, plain (the goal's baseline) and with what mcpTools' calls carry (a signal to cancel the call, _meta with the idempotency key and epoch)`,
        `run starts: app.request of the producer's app (no socket, no key), each POST's answer read; /mcp is one JSON-RPC tools/call with wait_ms 0 (answers at once, as POST /v1 does), its server built per request (stateless) with the served entities read; both enqueue on the same queue, no worker`,
      ],
    };
  },
};

/** The echo server over Streamable HTTP, as a process of its own. */
async function startHttpEchoServer(): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [...tsNodeArgs(ECHO_SERVER), '--http'], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  for await (const line of createInterface({ input: child.stdout! })) {
    const url = /^listening (\S+)/.exec(line)?.[1];
    if (url) return { url, child };
  }
  throw new Error('the HTTP echo server exited before it listened');
}

async function directClient(server: McpServerAddress): Promise<Client> {
  const client = new Client({ name: 'bench-direct', version: '1.0.0' });
  await client.connect(
    'command' in server
      ? new StdioClientTransport({ command: server.command, args: server.args, cwd: server.cwd })
      : new StreamableHTTPClientTransport(new URL(server.url)),
  );
  return client;
}

let calls = 0;

async function callThroughCairn(echo: Tool): Promise<void> {
  calls += 1;
  const args = echo.parameters.parse({ text: TEXT });
  const output = await echo.execute(args, {
    signal: new AbortController().signal,
    runId: 'bench-run',
    toolCallId: `call_${calls}`,
    idempotencyKey: `bench-run:call_${calls}`,
    epoch: 1,
    context: undefined,
  });
  if (output !== TEXT) throw new Error(`mcpTools echo answered ${String(output)}`);
}

/** The plain call; with `asCairn`, carrying what mcpTools' calls carry: a signal to cancel it and `_meta`. */
async function callDirect(client: Client, asCairn = false): Promise<void> {
  calls += 1;
  const result = asCairn
    ? await client.callTool(
        {
          name: 'echo',
          arguments: { text: TEXT },
          _meta: { 'cairn/idempotency-key': `bench-run:call_${calls}`, 'cairn/epoch': 1 },
        },
        undefined,
        { signal: new AbortController().signal },
      )
    : await client.callTool({ name: 'echo', arguments: { text: TEXT } });
  const [block] = result.content as { type: string; text?: string }[];
  if (block?.text !== TEXT) throw new Error(`SDK echo answered ${JSON.stringify(result)}`);
}
