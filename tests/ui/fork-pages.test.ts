import { requiresChromium } from '@cairn/services';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESEARCHER } from '../fleet/fleet.js';
import { launchChromium, screenshotPath } from './chromium.js';
import { startUiStack, type UiStack } from './ui-stack.js';

// "Fork from here" on a run's page (docs/forks-and-replay.md "Forks: time travel at a checkpoint"), with a real worker.

/** Text as a person reads it: runs of whitespace as one space. */
const words = (text: string | null) => (text ?? '').replace(/\s+/g, ' ').trim();

describe('forks from the run page', requiresChromium(), () => {
  let stack: UiStack;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    stack = await startUiStack({ toolDelayMs: 20 });
    await stack.fleet.spawnWorker('a');
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  });
  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
  });

  it('lists the checkpoints; "Fork from here" with an input opens the fork, which links its source, and the source lists it', async () => {
    const { client } = stack.fleet;
    const run = await client.enqueueRun({
      entity: RESEARCHER,
      input: "Research 'cairns'",
      checkpoint: 'tool-batch',
    });
    expect((await client.waitForRun(run.runId, { timeoutMs: 60_000 })).status).toBe('COMPLETED');
    const source = (await client.getRun(run.runId))!;

    await page.goto(`${stack.baseUrl}/ui/runs/${run.runId}`);
    const items = page.locator('ol.checkpoints li');
    expect(await items.count()).toBe(source.checkpoints.length);
    const second = source.checkpoints[1]!;
    expect(words(await items.nth(1).textContent())).toContain(
      `#2 · message ${second.message_index} · epoch ${second.epoch}`,
    );
    await page.screenshot({ path: screenshotPath('run-checkpoints.png'), fullPage: true });

    await page.fill('#continue-input', 'Fetch only what is left.');
    await items.nth(1).locator('button[data-command="fork-at"]').click();
    await page.waitForURL((url) => url.pathname !== `/ui/runs/${run.runId}`);
    const forkId = (await page.getAttribute('#run', 'data-run-id'))!;
    expect(forkId).not.toBe(run.runId);
    const forkedFrom = words(await page.textContent('[data-forked-from]'));
    expect(forkedFrom).toBe(`${run.runId} at checkpoint 2 (message ${second.message_index})`);
    // The fork finishes on the open page; its first two checkpoints are the source's.
    await expect
      .poll(() => page.getAttribute('#run', 'data-status'), { timeout: 60_000 })
      .toBe('COMPLETED');
    await expect.poll(() => page.locator('ol.checkpoints li').count()).toBeGreaterThan(2);
    expect(words(await page.locator('ol.checkpoints li').nth(1).textContent())).toContain(
      'from the source',
    );
    expect(words(await page.locator('ol.checkpoints li').nth(2).textContent())).not.toContain(
      'from the source',
    );
    const fork = (await client.getRun(forkId))!;
    expect(fork.messages[second.message_index]).toEqual({
      role: 'user',
      content: 'Fetch only what is left.',
    });
    await page.screenshot({ path: screenshotPath('fork-page.png'), fullPage: true });

    await page.click('[data-forked-from] a');
    await page.waitForURL((url) => url.pathname === `/ui/runs/${run.runId}`);
    expect(await page.getAttribute(`[data-fork-run-id="${forkId}"] a`, 'href')).toBe(
      `/ui/runs/${forkId}`,
    );
  });
});
