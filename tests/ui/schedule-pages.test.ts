import { createClient } from '@cairn/client';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESEARCHER } from '../fleet/fleet.js';
import { requiresChromium } from '@cairn/services';
import { launchChromium } from './chromium.js';
import { startUiStack, type UiStack } from './ui-stack.js';

const KEY = 'ui-key';

describe('schedule pages (real producer and worker)', requiresChromium(), () => {
  let stack: UiStack;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    // Signed in with a key: the Pause and Resume forms carry its CSRF token.
    stack = await startUiStack({ toolDelayMs: 50, apiKeys: [KEY] });
    await stack.fleet.spawnWorker('ui-worker');
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
    await page.goto(`${stack.baseUrl}/ui`);
    await page.waitForURL(/\/ui\/login/);
    await page.fill('input[name=key]', KEY);
    await page.click('#login-form button[type=submit]');
    await page.waitForURL(`${stack.baseUrl}/ui`);
  });
  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
  });

  it('lists a schedule, shows its next firings and the runs it started, and pauses and resumes it with its buttons', async () => {
    const cairn = createClient({ baseUrl: stack.baseUrl, apiKey: KEY });
    const { schedule_id: id } = await cairn.schedules.create({
      entity: RESEARCHER,
      input: "Research 'cairns'",
      every_ms: 2000,
      overlap: 'allow',
    });

    await page.click('header a[href="/ui/schedules"]');
    await page.waitForSelector(`#schedule-table tr[data-schedule-id="${id}"]`);
    await page.click(`#schedule-table a[href="/ui/schedules/${id}"]`);
    await page.waitForSelector('#schedule-timing');
    expect(await page.textContent('#schedule-timing')).toBe('every 2 s');
    expect(await page.locator('#next-firings li').count()).toBe(5);

    // Reloaded until a firing's run shows, then its link opens the run's page.
    await expect
      .poll(
        async () => {
          await page.reload();
          return page.locator('#recent-firings tr[data-outcome="started"] a').count();
        },
        { timeout: 60_000 },
      )
      .toBeGreaterThan(0);
    const runHref = await page
      .locator('#recent-firings tr[data-outcome="started"] a')
      .first()
      .getAttribute('href');
    expect(runHref).toMatch(/^\/ui\/runs\//);

    await page.click('#schedule-pause');
    await page.waitForSelector('#schedule-resume');
    expect(await page.textContent('#next-firings')).toContain('None: the schedule is paused.');
    expect((await cairn.schedules.get(id)).paused).toBe(true);

    await page.click('#schedule-resume');
    await page.waitForSelector('#schedule-pause');
    expect(await page.locator('#next-firings li').count()).toBe(5);
    expect((await cairn.schedules.get(id)).paused).toBe(false);

    await page.goto(`${stack.baseUrl}${runHref!}`);
    await page.waitForSelector('#run');
    // The run's page names the schedule and the firing that started it, linked back.
    expect(await page.textContent('#run-schedule')).toContain(id);
    expect(await page.getAttribute('#run-schedule a', 'href')).toBe(`/ui/schedules/${id}`);
    expect(await page.textContent('#run-schedule')).toContain('firing of');
  });
});
