/**
 * `/mcp`'s start tools wait within a bound (docs/mcp.md, "Waiting for the result"): a run that
 * ends within it answers with its result, after a progress notification per event it recorded; a
 * longer one answers with its run id and the URL of its page. Runs executed by an engine in the
 * test on the same store.
 */
import { Engine } from '@cairn/engine';
import { createRegistry } from '@cairn/research-team';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Progress } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, expect, it } from 'vitest';
import {
  openProducerFixture,
  type ProducerFixture,
} from '../../apps/producer/src/test-support/producer-fixture.js';
import { waitFor } from '../fleet/fleet.js';

let fx: ProducerFixture | undefined;
const clients: Client[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
  await fx?.close();
});

/** An MCP client of `fx`'s `/mcp` (requests go to the app in this process). */
async function mcpOf(fixture: ProducerFixture): Promise<Client> {
  const client = new Client({ name: 'cairn-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL('http://cairn.test/mcp'), {
    fetch: async (url, init) => fixture.app.request(String(url), init),
  });
  await client.connect(transport);
  clients.push(client);
  return client;
}

/** The JSON text of a tool's answer. */
function answerOf(result: Awaited<ReturnType<Client['callTool']>>) {
  const [block] = result.content as { type: string; text: string }[];
  return { isError: result.isError === true, text: block!.text };
}

it('a run that ends within the bound answers with its result, and reports each event it recorded as progress', async () => {
  fx = await openProducerFixture();
  const mcp = await mcpOf(fx);
  const progress: Progress[] = [];
  const call = mcp.callTool(
    { name: 'start_agent_researcher', arguments: { input: 'cairns' } },
    undefined,
    { onprogress: (p) => void progress.push(p) },
  );

  // A worker takes the run while the start tool waits.
  const { client, store } = fx;
  let runId = '';
  await waitFor(
    async () => {
      runId = (await client.listRuns({ limit: 1 })).runs[0]?.run_id ?? '';
      return runId !== '';
    },
    10_000,
    'the started run',
  );
  const engine = new Engine({ store, registry: createRegistry(), workerId: 'mcp-wait' });
  expect(await engine.processPickup({ job: 'run', runId, attemptsStarted: 1 })).toEqual({
    kind: 'finished',
    status: 'COMPLETED',
  });

  const answer = answerOf(await call);
  expect(answer.isError).toBe(false);
  const view = (await client.getRun(runId))!;
  expect(JSON.parse(answer.text)).toMatchObject({
    run_id: runId,
    status: 'COMPLETED',
    content: view.content,
    session_id: view.session_id,
    page_url: `http://cairn.test/ui/runs/${runId}`,
  });
  // One notification per event, in order, counting up.
  const events = await client.listEvents(runId, 0);
  expect(progress.map((p) => p.message)).toEqual(events.map((e) => e.type));
  expect(progress.map((p) => p.progress)).toEqual(events.map((_, i) => i + 1));
});

it('a run still going at the bound answers with its run id and page; wait_ms past the bound is refused naming it', async () => {
  fx = await openProducerFixture({ mcp: { waitMs: 300, publicUrl: 'https://cairn.example.com/' } });
  const mcp = await mcpOf(fx);
  // No worker: the run stays PENDING past the bound.
  const started = answerOf(
    await mcp.callTool({ name: 'start_agent_researcher', arguments: { input: 'cairns' } }),
  );
  expect(started.isError).toBe(false);
  const { run_id: runId, ...rest } = JSON.parse(started.text) as Record<string, unknown>;
  expect(rest).toEqual({
    status: 'PENDING',
    session_id: (await fx.client.getRun(String(runId)))!.session_id,
    page_url: `https://cairn.example.com/ui/runs/${String(runId)}`,
  });

  const tooLong = answerOf(
    await mcp.callTool({
      name: 'start_agent_researcher',
      arguments: { input: 'cairns', wait_ms: 301 },
    }),
  );
  expect(tooLong.isError).toBe(true);
  expect(tooLong.text).toContain('wait_ms');
  expect((await fx.client.listRuns({ limit: 10 })).runs).toHaveLength(1);
});
