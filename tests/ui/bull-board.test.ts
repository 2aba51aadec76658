import { requiresChromium } from '@cairn/services';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEAM } from '../fleet/fleet.js';
import { launchChromium, screenshotPath } from './chromium.js';
import { startUiStack, type UiStack } from './ui-stack.js';

describe('Bull Board under its Content-Security-Policy', requiresChromium(), () => {
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

  it('renders the queue with its own scripts and styles, and refuses nothing of its own', async () => {
    const { runId } = await stack.fleet.client.enqueueRun({
      entity: TEAM,
      input: 'Research the board',
    });
    const page = await browser.newPage();
    const refused: string[] = [];
    page.on('console', (message) => {
      if (message.text().includes('Content Security Policy')) refused.push(message.text());
    });
    const response = await page.goto(`${stack.baseUrl}/admin/queues`);
    expect(response?.headers()['content-security-policy']).toContain("script-src 'self'");
    expect(response?.headers()['x-frame-options']).toBe('DENY');

    const queueName = stack.fleet.client.runQueue.queue.name;
    await page.waitForSelector(`text=${queueName}`, { timeout: 30_000 });
    // The queue's page lists the waiting run's job, fetched by the board's script from its API.
    // Every run job carries its run's priority (5 unless created with another), so BullMQ keeps it
    // in its prioritized set and the board lists it under that status, not under "waiting".
    await page.goto(`${stack.baseUrl}/admin/queues/queue/${queueName}?status=prioritized`);
    await page.waitForSelector(`text=run-${runId}`, { timeout: 30_000 });
    await page.screenshot({ path: screenshotPath('bull-board.png') });
    // Its styles applied: the board's own stylesheet laid the page out (not the unstyled HTML).
    expect(Number(await page.evaluate('document.styleSheets.length'))).toBeGreaterThan(0);
    // Only the Google Fonts stylesheet, another origin, is refused: the board falls back to the system font.
    expect(refused.filter((text) => !text.includes('fonts.googleapis.com'))).toEqual([]);
  });
});
