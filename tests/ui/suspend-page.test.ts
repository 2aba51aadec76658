import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESEARCHER } from '../fleet/fleet.js';
import { requiresChromium } from '@cairn/services';
import { launchChromium } from './chromium.js';
import { startUiStack, type UiStack } from './ui-stack.js';

describe('suspend and resume from a run page (real worker)', requiresChromium(), () => {
  let stack: UiStack;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    // Signed in with a key: the page's writes carry its CSRF token.
    stack = await startUiStack({ toolDelayMs: 700, apiKeys: ['ui-key'] });
    await stack.fleet.spawnWorker('ui-worker');
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
    await page.goto(`${stack.baseUrl}/ui`);
    await page.waitForURL(/\/ui\/login/);
    await page.fill('input[name=key]', 'ui-key');
    await page.click('#login-form button[type=submit]');
    await page.waitForURL(`${stack.baseUrl}/ui`);
  });
  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
  });

  it('suspends a running run at its next checkpoint with the Suspend button, and resumes it to COMPLETED with Resume', async () => {
    const { client } = stack.fleet;
    const run = await client.enqueueRun({
      entity: RESEARCHER,
      input: "Research 'cairns'",
      checkpoint: 'tool-batch',
    });
    await page.goto(`${stack.baseUrl}/ui/runs/${run.runId}`);
    await page.waitForSelector('#run[data-status="RUNNING"]', { timeout: 30_000 });
    expect(await page.isDisabled('button[data-command="suspend"]')).toBe(false);
    await page.click('button[data-command="suspend"]');
    await page.waitForSelector('#run[data-status="PAUSED"]', { timeout: 30_000 });
    await page.waitForSelector('[data-action-kind="suspended"][data-action-status="pending"]');
    expect(await page.isDisabled('button[data-command="suspend"]')).toBe(true);

    await page.click('.controls button[data-command="resume"]');
    await page.waitForSelector('#run[data-status="COMPLETED"]', { timeout: 60_000 });
    const view = (await client.getRun(run.runId))!;
    expect(view.status).toBe('COMPLETED');
    expect(view.attempts.map((a) => a.reason)).toEqual(['run', 'continue']);
    // Each of the researcher's four calls ran once, across the suspension.
    expect(view.tools.map((t) => t.status)).toEqual([
      'completed',
      'completed',
      'completed',
      'completed',
    ]);
  });
});
