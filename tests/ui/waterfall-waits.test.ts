import { requiresChromium } from '@cairn/services';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPS_AGENT, OPS_REGISTRY } from '../hitl/hitl-fleet.js';
import { launchChromium, screenshotPath } from './chromium.js';
import { startUiStack, type UiStack } from './ui-stack.js';

describe(
  'a pause for a person in the run page waterfall (real worker, gated tools)',
  requiresChromium(),
  () => {
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

    it('marks the pause as a gap that grows while it waits, then sits between the paused lane and the one its decisions resumed', async () => {
      const { client } = stack.fleet;
      const run = await client.enqueueRun({ entity: OPS_AGENT, input: 'restart api, db, cache' });
      await page.goto(`${stack.baseUrl}/ui/runs/${run.runId}`);
      await page.waitForSelector('#run[data-status="PAUSED"]', { timeout: 30_000 });
      const own = `[data-wf-run="${run.runId}"]`;
      const gap = page.locator(`${own} > .wf-gap[data-wait="person"]`);
      await gap.waitFor();
      expect(await gap.locator('.wf-name').textContent()).toContain(
        'paused for a person: 3 actions to decide',
      );
      // Open while nobody decides: it grows without a reload.
      const open = `${own} > .wf-gap[data-wait="person"] .wf-wait:not([data-e])`;
      const width = () => page.locator(open).evaluate((el) => el.getBoundingClientRect().width);
      const before = await width();
      await expect.poll(width, { timeout: 10_000 }).toBeGreaterThan(before + 5);
      await page.locator('#waterfall').screenshot({ path: screenshotPath('waterfall-paused.png') });

      const actions = page.locator('li.action');
      await expect.poll(() => actions.count()).toBe(3);
      // Polled with the page's flash, the decisions it posted and how many times it re-read
      // itself, so that a decision that does not show says where it stopped.
      const posted: number[] = [];
      let reads = 0;
      page.on('response', (res) => {
        const method = res.request().method();
        if (method === 'POST' && res.url().endsWith('/decisions')) posted.push(res.status());
        if (method === 'GET' && res.url() === page.url()) reads++;
      });
      const afterDecision = async () => ({
        actions: await actions.count(),
        flash: await page.textContent('#flash'),
        posted: posted.join(' '),
        reads,
      });
      for (let left = 3; left > 0; left--) {
        await actions.first().locator('button[data-command="approve"]').click();
        await expect.poll(afterDecision).toMatchObject({ actions: left - 1 });
      }
      await page.waitForSelector('#run[data-status="COMPLETED"]', { timeout: 30_000 });
      await expect
        .poll(() =>
          page
            .locator(`${own} > .wf-lane`)
            .evaluateAll((els) => els.map((el) => el.getAttribute('data-outcome'))),
        )
        .toEqual(['paused', 'completed']);
      expect(
        await gap.evaluate((el) => [
          el.previousElementSibling?.getAttribute('data-epoch'),
          el.nextElementSibling?.getAttribute('data-epoch'),
          el.querySelector('.wf-wait')?.hasAttribute('data-e'),
        ]),
      ).toEqual(['1', '2', true]);
      // The approved calls ran in the lane that resumed.
      expect(
        await page
          .locator(`${own} > .wf-lane[data-epoch="2"] .wf-row[data-bar="tool"] .wf-name strong`)
          .count(),
      ).toBeGreaterThanOrEqual(3);
      await page
        .locator('#waterfall')
        .screenshot({ path: screenshotPath('waterfall-resumed.png') });
    });
  },
);
