/**
 * Tools from MCP servers (docs/agents-and-teams.md, "Tools from MCP servers"): a real MCP server built on the official
 * SDK, over Streamable HTTP in this process and over stdio as a child process, called by runs of a
 * real engine on a real store.
 */
import { getEventListeners } from 'node:events';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Agent, Engine, Registry, type Tool } from '@cairn/engine';
import {
  closeMcpClients,
  MCP_META_EPOCH,
  MCP_META_IDEMPOTENCY_KEY,
  mcpTools,
} from '@cairn/engine/mcp';
import { firstUserInput, ScriptedModel, toolResults } from '@cairn/engine/testing';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openTestStore, type TestStore } from '../helpers/test-store.js';
import { startKnowledgeBaseHttp, type KnowledgeBaseHttp } from './http-server.js';

const STDIO_SERVER = fileURLToPath(new URL('./stdio-server.ts', import.meta.url));

let t: TestStore;
let kb: KnowledgeBaseHttp;
beforeAll(async () => {
  kb = await startKnowledgeBaseHttp();
});
afterAll(async () => {
  await closeMcpClients();
  await kb?.close();
});
beforeEach(async () => {
  t = await openTestStore();
});
afterEach(async () => {
  await t.close();
});

/** An agent whose model makes the given calls in one turn (fresh ids, as a real model's), then reports the results. */
function agentCalling(
  tools: Tool[],
  calls: { name: string; arguments: Record<string, unknown> }[],
): Agent {
  return new Agent({
    name: 'librarian',
    tools,
    model: new ScriptedModel({
      toolCallIds: 'fresh',
      decide: ({ messages, tools: offered }) => {
        const results = toolResults(messages);
        if (results.length === 0) return { toolCalls: calls.map((c) => ({ ...c })) };
        return {
          text: `${firstUserInput(messages)} | offered ${offered.map((o) => o.name).join(',')} | ${results.map((r) => r.content).join(' | ')}`,
        };
      },
    }),
  });
}

function engineFor(agent: Agent): Engine {
  return new Engine({
    store: t.store,
    registry: new Registry({ agents: [agent] }),
    workerId: 'local',
  });
}

describe('tools from an MCP server', () => {
  it('over Streamable HTTP: prefixed and filtered; results and isError come back as tool results; each call carries its idempotency key and epoch', async () => {
    const tools = await mcpTools({
      server: { url: kb.url, headers: { Authorization: 'Bearer kb-secret' } },
      prefix: 'kb',
      exclude: ['wait', 'whoami'],
    });
    expect(tools.map((tool) => tool.name)).toEqual(['kb_lookup', 'kb_fail']);
    const agent = agentCalling(tools, [
      { name: 'kb_lookup', arguments: { topic: 'cairns' } },
      { name: 'kb_fail', arguments: { why: 'closed on sundays' } },
    ]);
    const run = await engineFor(agent).run(agent, 'stones');

    expect(run.status).toBe('COMPLETED');
    expect(run.content).toBe(
      'stones | offered kb_lookup,kb_fail | kb: cairns are stacked stones | Tool "kb_fail" failed: refused: closed on sundays',
    );
    // The two calls of the batch run concurrently: which is recorded (and reaches the server) first varies.
    const view = (await t.store.getRunView(run.runId))!;
    const byName = <T extends { name: string }>(items: T[]) =>
      [...items].sort((a, b) => a.name.localeCompare(b.name));
    expect(byName(view.tools).map((c) => [c.name, c.status])).toEqual([
      ['kb_fail', 'error'],
      ['kb_lookup', 'completed'],
    ]);
    // The server saw each call once, with the run's idempotency key and the execution's epoch.
    const seen = byName(
      kb.log.calls
        .filter((c) => c.tool !== 'whoami')
        .slice(-2)
        .map((c) => ({ ...c, name: c.tool })),
    );
    expect(seen.map((c) => [c.tool, c.args])).toEqual([
      ['fail', { why: 'closed on sundays' }],
      ['lookup', { topic: 'cairns' }],
    ]);
    for (const [i, call] of byName(view.tools).entries()) {
      expect(seen[i]!.meta[MCP_META_IDEMPOTENCY_KEY]).toBe(call.idempotency_key);
      expect(seen[i]!.meta[MCP_META_EPOCH]).toBe(1);
    }
    expect(kb.authorizations.every((a) => a === 'Bearer kb-secret')).toBe(true);
  });

  it('a call its tool timeout cuts short is cancelled at the server, and the model reads the timeout', async () => {
    const [wait] = await mcpTools({ server: { url: kb.url }, include: ['wait'], timeoutMs: 300 });
    const agent = agentCalling([wait!], [{ name: 'wait', arguments: {} }]);
    const run = await engineFor(agent).run(agent, 'patience');

    expect(run.status).toBe('COMPLETED');
    expect(run.content).toContain('timed out after 300 ms');
    await expect.poll(() => kb.log.cancelled.length).toBe(1);
  });

  it('a gated MCP tool pauses the run for a person before the server is called', async () => {
    const tools = await mcpTools({
      server: { url: kb.url },
      prefix: 'kb',
      include: ['lookup'],
      needsApproval: ['lookup'],
    });
    const calls = kb.log.calls.length;
    const agent = agentCalling(tools, [{ name: 'kb_lookup', arguments: { topic: 'fjords' } }]);
    const run = await engineFor(agent).run(agent, 'gated');

    expect(run.status).toBe('PAUSED');
    const view = (await t.store.getRunView(run.runId))!;
    expect(view.pending_actions.map((a) => [a.kind, a.tool, a.args])).toEqual([
      ['approval', 'kb_lookup', { topic: 'fjords' }],
    ]);
    expect(kb.log.calls.length).toBe(calls);
  });

  it('over stdio: the server is spawned once per process and shared by the runs of every agent that takes its tools', async () => {
    const server = { command: process.execPath, args: ['--import', 'tsx', STDIO_SERVER] };
    const [first] = await mcpTools({ server, include: ['whoami'] });
    const [second] = await mcpTools({ server, prefix: 'again', include: ['whoami'] });
    const agent = agentCalling(
      [first!, second!],
      [
        { name: 'whoami', arguments: {} },
        { name: 'again_whoami', arguments: {} },
      ],
    );
    const engine = engineFor(agent);
    const runs = [await engine.run(agent, 'one'), await engine.run(agent, 'two')];

    const pids = runs.flatMap((run) => [...run.content!.matchAll(/pid (\d+)/g)].map((m) => m[1]));
    expect(pids).toHaveLength(4);
    expect(new Set(pids).size).toBe(1);
    expect(pids[0]).not.toBe(String(process.pid));
  });

  it('a stdio server killed mid-call: the call is an error result naming the server, and the next call spawns it again', async () => {
    const server = {
      command: process.execPath,
      args: ['--import', 'tsx', STDIO_SERVER, 'restarts'],
    };
    const tools = await mcpTools({ server, include: ['whoami', 'wait'] });
    const whoami = agentCalling(tools, [{ name: 'whoami', arguments: {} }]);
    const pidOf = async () =>
      /pid (\d+)/.exec((await engineFor(whoami).run(whoami, 'who')).content!)![1]!;
    const first = await pidOf();

    const mark = join(mkdtempSync(join(tmpdir(), 'cairn-mcp-')), 'waiting');
    const waiter = agentCalling(tools, [{ name: 'wait', arguments: { mark } }]);
    const waiting = engineFor(waiter).run(waiter, 'hold');
    await expect.poll(() => existsSync(mark)).toBe(true);
    process.kill(Number(first), 'SIGKILL');
    const cut = await waiting;
    expect(cut.status).toBe('COMPLETED');
    expect(cut.content).toContain(
      `Tool "wait" failed: MCP server ${server.command} ${server.args.join(' ')}: `,
    );

    const second = await pidOf();
    expect(second).not.toBe(first);
  });

  it('names a tool the server lacks, and a server address that is not one', async () => {
    await expect(mcpTools({ server: { url: kb.url }, include: ['lookup', 'dig'] })).rejects.toThrow(
      'MCP server has no tool "dig" (include); it has lookup, fail, wait, whoami',
    );
    await expect(mcpTools({ server: { url: 'ftp://127.0.0.1/mcp' } })).rejects.toThrow(
      'MCP server url "ftp://127.0.0.1/mcp" must be http or https',
    );
    await expect(
      mcpTools({ server: { url: kb.url }, prefix: 'k b', include: ['lookup'] }),
    ).rejects.toThrow('tool name "k b_lookup" is invalid');
  });

  it('a server that is down is named by its URL without the query, which may hold a key', async () => {
    const error = await mcpTools({ server: { url: 'http://127.0.0.1:1/mcp?api_key=sekrit' } }).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(error?.message).toMatch(/^MCP server http:\/\/127\.0\.0\.1:1\/mcp: /);
    expect(error?.message).not.toContain('sekrit');
  });

  it('a long-lived HTTP connection: its calls pile no abort listeners on one signal', async () => {
    // The SDK's transport hands every request of a connection one signal, and Node's fetch adds an
    // abort listener per request that only garbage collection takes off. Watch the signals fetch gets.
    const seen = new Set<AbortSignal>();
    const realFetch = globalThis.fetch;
    globalThis.fetch = (input, init) => {
      if (init?.signal) seen.add(init.signal);
      return realFetch(input, init);
    };
    try {
      const [lookup] = await mcpTools({ server: { url: kb.url }, include: ['lookup'] });
      for (let i = 0; i < 300; i++) {
        const answer = await lookup!.execute(
          { topic: `cairns ${i}` },
          {
            signal: new AbortController().signal,
            runId: 'long-lived',
            toolCallId: `call_${i}`,
            idempotencyKey: `long-lived:call_${i}`,
            epoch: 1,
            context: undefined,
          },
        );
        expect(answer).toBe(`kb: cairns ${i} are stacked stones`);
      }
    } finally {
      globalThis.fetch = realFetch;
    }
    const most = Math.max(...[...seen].map((signal) => getEventListeners(signal, 'abort').length));
    expect(most).toBeLessThan(10);
  });
});
