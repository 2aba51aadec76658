/**
 * Cairn as an MCP server (docs/http-api.md, "Cairn as an MCP server"): the official MCP client over Streamable
 * HTTP against the producer's `/mcp`, with the keys and tenants of `/v1`; runs executed by an
 * engine in the test on the same store.
 */
import { Engine } from '@cairn/engine';
import { createRegistry } from '@cairn/ops-agent';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, beforeEach, expect, it } from 'vitest';
import {
  openProducerFixture,
  type ProducerFixture,
} from '../../apps/producer/src/test-support/producer-fixture.js';

const ACME = 'acme-key';
const GLOBEX = 'globex-key';

let fx: ProducerFixture;
const clients: Client[] = [];
beforeEach(async () => {
  fx = await openProducerFixture(
    { apiKeys: ['admin-key', `acme:${ACME}`, `globex:${GLOBEX}`] },
    { registry: createRegistry() },
  );
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
  await fx.close();
});

/** An MCP client of the producer's `/mcp` with `key` (requests go to the app in this process). */
async function mcpAs(key: string): Promise<Client> {
  const client = new Client({ name: 'cairn-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL('http://cairn.test/mcp'), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
    fetch: async (url, init) => fx.app.request(String(url), init),
  });
  await client.connect(transport);
  clients.push(client);
  return client;
}

/** A tool's answer: its JSON text parsed, and whether it is an error. */
async function callTool(client: Client, name: string, args: Record<string, unknown>) {
  const result = await client.callTool({ name, arguments: args });
  const [block] = result.content as { type: string; text: string }[];
  return {
    isError: result.isError === true,
    text: block!.text,
    json: () => JSON.parse(block!.text) as Record<string, unknown>,
  };
}

function engine(): Engine {
  return new Engine({ store: fx.store, registry: createRegistry(), workerId: 'mcp-test' });
}

it('starts a run of a served entity under the key tenant, lists and decides its pending action, and reads it to its end', async () => {
  const acme = await mcpAs(ACME);
  const { tools } = await acme.listTools();
  expect(tools.map((tool) => tool.name).sort()).toEqual([
    'decide_actions',
    'get_run',
    'list_pending_actions',
    'start_agent_ops-agent',
    'start_team_ops-team',
  ]);

  // No worker yet: the start answers at once (wait_ms 0) with the run still pending.
  const start = { input: 'restart api', idempotency_key: 'incident-7', wait_ms: 0 };
  const started = await callTool(acme, 'start_agent_ops-agent', start);
  expect(started.isError).toBe(false);
  const { run_id: runId, status } = started.json() as { run_id: string; status: string };
  expect(status).toBe('PENDING');
  // A retried start with the same key answers the same run.
  expect((await callTool(acme, 'start_agent_ops-agent', start)).json().run_id).toBe(runId);
  expect((await fx.client.listRuns({ limit: 10 })).runs.map((r) => r.run_id)).toEqual([runId]);
  expect(await fx.client.runOwner(runId)).toEqual({ tenantId: 'acme' });

  // A worker takes it: the restart needs a person.
  expect(await engine().processPickup({ job: 'run', runId, attemptsStarted: 1 })).toEqual({
    kind: 'finished',
    status: 'PAUSED',
  });
  const listed = await callTool(acme, 'list_pending_actions', { run_id: runId });
  const [action] = listed.json().pending_actions as { action_id: string; tool: string }[];
  expect(action).toMatchObject({
    kind: 'approval',
    tool: 'restart_service',
    args: { service: 'api' },
  });

  // Another tenant's key sees no such run, and decides nothing.
  const globex = await mcpAs(GLOBEX);
  const foreign = await callTool(globex, 'decide_actions', {
    run_id: runId,
    decisions: [{ action_id: action!.action_id, type: 'approve' }],
  });
  expect(foreign.isError).toBe(true);
  expect(foreign.text).toContain(`run ${runId} not found`);
  expect((await fx.client.getRun(runId))?.status).toBe('PAUSED');

  const decided = await callTool(acme, 'decide_actions', {
    run_id: runId,
    decisions: [{ action_id: action!.action_id, type: 'approve' }],
  });
  expect(decided.json()).toMatchObject({ applied: [action!.action_id], pending: 0 });
  // The decision enqueued its resume; a worker's pickup of it runs it to its end.
  expect(
    await engine().processPickup({
      job: 'continue',
      reason: 'continue',
      runId,
      attemptsStarted: 1,
    }),
  ).toEqual({ kind: 'finished', status: 'COMPLETED' });

  const done = (await callTool(acme, 'get_run', { run_id: runId })).json();
  expect(done).toMatchObject({ run_id: runId, status: 'COMPLETED', pending_actions: [] });
  expect(done.content).toContain('restart_service');
});

it('refuses bad input naming the field, and a read of an unknown run, as tool errors; a key is needed', async () => {
  const acme = await mcpAs(ACME);
  const empty = await callTool(acme, 'start_agent_ops-agent', { input: '' });
  expect(empty.isError).toBe(true);
  expect(empty.text).toContain('input');
  expect((await fx.client.listRuns({ limit: 10 })).runs).toEqual([]);

  const unknown = await callTool(acme, 'get_run', { run_id: 'no-such-run' });
  expect(unknown.isError).toBe(true);
  expect(unknown.text).toContain('run no-such-run not found');

  const anonymous = await fx.app.request('/mcp', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  expect(anonymous.status).toBe(401);
});

it('answers a body that is not JSON with a JSON-RPC parse error', async () => {
  const res = await fx.app.request('/mcp', {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${ACME}`,
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
    },
    body: '{"jsonrpc":',
  });
  expect(res.status).toBe(400);
  expect(await res.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32700 } });
});
