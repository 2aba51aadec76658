import { requiresChromium } from '@cairn/services';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPS_AGENT, OPS_REGISTRY } from '../hitl/hitl-fleet.js';
import { launchChromium, screenshotPath } from './chromium.js';
import { startUiStack, type UiStack } from './ui-stack.js';

describe('pending actions on a run page (real worker, gated tools)', requiresChromium(), () => {
  let stack: UiStack;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    stack = await startUiStack({ registryModule: OPS_REGISTRY });
    await stack.fleet.spawnWorker('ops-worker', { OPS_LEDGER_URL: stack.fleet.db.url });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
  });
  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
  });

  it('approves one call, approves another with edited args and rejects a third; the run resumes and completes', async () => {
    const { client } = stack.fleet;
    const run = await client.enqueueRun({ entity: OPS_AGENT, input: 'restart api, db, cache' });
    await page.goto(`${stack.baseUrl}/ui/runs/${run.runId}`);
    await page.waitForSelector('#run[data-status="PAUSED"]', { timeout: 30_000 });
    const actions = page.locator('li.action');
    await expect.poll(() => actions.count()).toBe(3);
    // One batch's actions share their creation time: the view orders them by action id.
    expect((await actions.locator('textarea.action-args').allTextContents()).sort()).toEqual(
      ['api', 'cache', 'db'].map((service) => JSON.stringify({ service }, null, 2)),
    );
    await page.screenshot({ path: screenshotPath('run-paused.png'), fullPage: true });

    const action = (service: string) =>
      page.locator('li.action', { hasText: `"service": "${service}"` });
    await action('api').locator('button[data-command="approve"]').click();
    await expect.poll(() => actions.count()).toBe(2);
    await action('db').locator('textarea.action-args').fill('{"service":"db-replica"}');
    await action('db').locator('button[data-command="edit"]').click();
    await expect.poll(() => actions.count()).toBe(1);
    await action('cache').locator('input.action-message').fill('cache is warming, not now');
    await action('cache').locator('button[data-command="reject"]').click();

    await page.waitForSelector('#run[data-status="COMPLETED"]', { timeout: 30_000 });
    expect(await actions.count()).toBe(0);
    const answer = (await page.locator('[data-refresh="content"] .answer').textContent())!;
    expect(answer).toContain('restarted api');
    expect(answer).toContain('restarted db-replica');
    expect(answer).toContain('cache is warming, not now');
    expect(answer).not.toContain('restarted cache');
  });
});
