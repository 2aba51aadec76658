/**
 * Cairn's `/mcp` driven by a published MCP client: the MCP Inspector's command-line mode
 * (`@modelcontextprotocol/inspector-cli` from npm, the `--cli` mode of `@modelcontextprotocol/inspector`),
 * a process of its own over Streamable HTTP with a tenant's key in a header (docs/mcp.md).
 */
import { execFile } from 'node:child_process';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { serve } from '@hono/node-server';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  openProducerFixture,
  type ProducerFixture,
} from '../../apps/producer/src/test-support/producer-fixture.js';

const INSPECTOR = fileURLToPath(import.meta.resolve('@modelcontextprotocol/inspector-cli'));
const ACME = 'acme-key';
const GLOBEX = 'globex-key';

let fx: ProducerFixture;
let server: Server;
let mcpUrl: string;
beforeAll(async () => {
  fx = await openProducerFixture({ apiKeys: ['admin-key', `acme:${ACME}`, `globex:${GLOBEX}`] });
  server = serve({ fetch: fx.app.fetch, port: 0, hostname: '127.0.0.1' }) as Server;
  await new Promise<void>((resolve) => server.once('listening', resolve));
  mcpUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await fx.close();
});

/** Runs the inspector's CLI mode against `/mcp` with `key`; answers the JSON it printed. */
async function inspect(key: string, ...args: string[]): Promise<Record<string, unknown>> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [
      INSPECTOR,
      '--cli',
      mcpUrl,
      '--transport',
      'http',
      '--header',
      `Authorization: Bearer ${key}`,
    ].concat(args),
    // Its CLI looks for its package.json relative to the working directory (then imports it relative
    // to its module): from its own build directory it finds it.
    { timeout: 30_000, cwd: dirname(INSPECTOR) },
  );
  return JSON.parse(stdout) as Record<string, unknown>;
}

/** The JSON text of a `tools/call` answer the inspector printed. */
function toolAnswer(printed: Record<string, unknown>) {
  const [block] = printed.content as { type: string; text: string }[];
  return { isError: printed.isError === true, text: block!.text };
}

it('lists the start tools, starts a run under the key tenant, and a tenant key cannot see another tenant run', async () => {
  const listed = await inspect(ACME, '--method', 'tools/list');
  const tools = listed.tools as { name: string; inputSchema: { properties: object } }[];
  expect(tools.map((t) => t.name).sort()).toEqual([
    'decide_actions',
    'get_run',
    'list_pending_actions',
    'start_agent_researcher',
    'start_team_research-team',
  ]);
  expect(
    Object.keys(tools.find((t) => t.name === 'start_agent_researcher')!.inputSchema.properties),
  ).toEqual(expect.arrayContaining(['input', 'idempotency_key', 'wait_ms']));

  // --tool-arg values are read as JSON when they parse: wait_ms=0 is the number 0.
  const call = ['--method', 'tools/call', '--tool-name'];
  const started = toolAnswer(
    await inspect(
      ACME,
      ...call,
      'start_agent_researcher',
      '--tool-arg',
      'input=cairns',
      'wait_ms=0',
    ),
  );
  expect(started.isError).toBe(false);
  const { run_id: runId, status } = JSON.parse(started.text) as { run_id: string; status: string };
  expect(status).toBe('PENDING');
  expect(await fx.client.runOwner(runId)).toEqual({ tenantId: 'acme' });

  const own = toolAnswer(await inspect(ACME, ...call, 'get_run', '--tool-arg', `run_id=${runId}`));
  expect(JSON.parse(own.text)).toMatchObject({ run_id: runId, status: 'PENDING' });
  const foreign = toolAnswer(
    await inspect(GLOBEX, ...call, 'get_run', '--tool-arg', `run_id=${runId}`),
  );
  expect(foreign).toEqual({
    isError: true,
    text: expect.stringContaining(`run ${runId} not found`),
  });
  const foreignPending = toolAnswer(
    await inspect(GLOBEX, ...call, 'list_pending_actions', '--tool-arg', `run_id=${runId}`),
  );
  expect(foreignPending.isError).toBe(true);
});
