import { requiresChromium } from '@cairn/services';
import type { APIResponse, Browser, Page, Route } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPS_AGENT, OPS_REGISTRY, pausedWith } from '../hitl/hitl-fleet.js';
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

  it('shows a decision at once when a re-read of the page that began before it answers after it', async () => {
    const run = await stack.fleet.client.enqueueRun({
      entity: OPS_AGENT,
      input: 'restart api, db',
    });
    await pausedWith(stack.fleet, run.runId, 2);
    const context = await browser.newContext({ viewport: { width: 1280, height: 1000 } });
    try {
      // The page's clock stands still: it re-reads itself only when this test moves it, or after a change.
      await context.clock.install();
      const frozen = await context.newPage();
      const url = `${stack.baseUrl}/ui/runs/${run.runId}`;
      await frozen.goto(url);
      await frozen.clock.pauseAt(Date.now() + 60_000);
      const actions = frozen.locator('li.action');
      expect(await actions.count()).toBe(2);

      // The next periodic re-read reads the page as it is before the decision; its answer is held.
      let held: Promise<{ route: Route; response: APIResponse }> | undefined;
      await frozen.route(url, async (route) => {
        if (held) await route.continue();
        else held = route.fetch().then((response) => ({ route, response }));
      });
      // A tick joins a re-read still under way (one the pause itself set off may not have
      // answered yet), so the clock moves a period at a time until a re-read has left.
      await expect
        .poll(async () => {
          if (!held) await frozen.clock.runFor(2_000);
          return held !== undefined;
        })
        .toBe(true);
      const answer = await held!;

      await actions.first().locator('button[data-command="approve"]').click();
      await expect.poll(() => frozen.textContent('#flash')).toContain('approve:');
      // The re-read from before the decision answers last: the page reads itself once more.
      await answer.route.fulfill({ response: answer.response });
      await expect.poll(() => actions.count()).toBe(1);
    } finally {
      await context.close();
    }
  });
});
