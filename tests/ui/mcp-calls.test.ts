/**
 * An MCP call shows its server (docs/mcp.md): a worker runs an agent whose tools come from the
 * knowledge-base MCP server over stdio; each call's `ToolCallStarted` event, as `@cairn/client`
 * streams it, names the server, and the run page shows it beside each call, in a browser.
 */
import { fileURLToPath } from 'node:url';
import { createClient } from '@cairn/client';
import { closeMcpClients } from '@cairn/engine/mcp';
import { requiresChromium } from '@cairn/services';
import type { Browser } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { MCP_STEPS } from '../mcp/mcp-fleet-registry.js';
import { launchChromium, screenshotPath } from './chromium.js';
import { startUiStack, type UiStack } from './ui-stack.js';

const REGISTRY = fileURLToPath(new URL('../mcp/mcp-fleet-registry.ts', import.meta.url));
const KB_SERVER = fileURLToPath(new URL('../mcp/stdio-server.ts', import.meta.url));
/** The name the knowledge-base server gives itself when connected. */
const KB_NAME = 'knowledge-base';

describe('MCP calls name their server', requiresChromium(), () => {
  let stack: UiStack | undefined;
  let browser: Browser | undefined;
  afterAll(async () => {
    await browser?.close();
    await closeMcpClients();
    await stack?.stop();
  });

  it('in the run events @cairn/client streams, and on the run page beside each call', async () => {
    // The test's own copy of the registry (the fleet's client loads it) spawns a server too.
    process.env.MCP_KB_SERVER = KB_SERVER;
    stack = await startUiStack({ registryModule: REGISTRY });
    await stack.fleet.spawnWorker('mcp-page', { MCP_KB_SERVER: KB_SERVER });
    const cairn = createClient({ baseUrl: stack.baseUrl });
    const { run_id: runId } = await cairn.runs.create({
      kind: 'agent',
      name: 'mcp-researcher',
      input: 'cairns',
    });

    const started: Record<string, unknown>[] = [];
    for await (const event of cairn.runs.events(runId)) {
      if (event.type === 'ToolCallStarted') started.push(event.data);
    }
    expect(started).toHaveLength(MCP_STEPS);
    for (const data of started)
      expect(data).toMatchObject({ name: 'kb_lookup', mcpServer: KB_NAME });
    const run = await cairn.runs.get(runId);
    expect(run.status).toBe('COMPLETED');

    browser = await launchChromium();
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`${stack.baseUrl}/ui/runs/${runId}`);
    const calls = page.locator('table.tools tbody tr');
    await calls.nth(MCP_STEPS - 1).waitFor();
    expect(
      await calls.evaluateAll((rows) =>
        rows.map((row) => [
          row.getAttribute('data-tool-call-id'),
          row.querySelector('[data-mcp-server]')?.textContent?.replace(/\s+/g, ' ').trim(),
        ]),
      ),
    ).toEqual(run.tools.map((t) => [t.tool_call_id, `MCP server ${KB_NAME}`]));
    await page.screenshot({ path: screenshotPath('mcp-calls.png'), fullPage: true });
  });
});
