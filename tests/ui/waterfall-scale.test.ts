import { requiresChromium } from '@cairn/services';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeLongRun } from '../../packages/store/src/test-support/long-run.js';
import { launchChromium, screenshotPath } from './chromium.js';
import { startUiStack, type UiStack } from './ui-stack.js';

const TURNS = 500;

describe('the run page waterfall of a long run', requiresChromium(), () => {
  let stack: UiStack;
  let browser: Browser;

  beforeAll(async () => {
    stack = await startUiStack();
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
  });

  // Its time at 100,000 runs is the bench's (npm run bench -- --only pages).
  it(`draws the latest bars of a ${TURNS}-turn run and says how many it left out`, async () => {
    const runId = await storeLongRun(stack.fleet.store, TURNS);
    const url = `${stack.baseUrl}/ui/runs/${runId}`;
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(url);
    const capped = page.locator('.wf-capped');
    expect(await capped.getAttribute('data-total')).toBe(String(2 * TURNS));
    expect(await capped.getAttribute('data-drawn')).toBe('300');
    expect(await page.locator('.wf .wf-bar').count()).toBe(300);
    // The latest are drawn: the last call is, the first is not.
    expect(await page.locator('.wf-row[data-tool-call-id="call-499"]').count()).toBe(1);
    expect(await page.locator('.wf-row[data-tool-call-id="call-0"]').count()).toBe(0);
    await page.locator('#waterfall').screenshot({ path: screenshotPath('waterfall-capped.png') });
    await page.close();
  });
});
