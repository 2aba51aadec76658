import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { holderOf, RESEARCHER, TEAM, waitFor } from '../fleet/fleet.js';
import { requiresChromium } from '@cairn/services';
import { launchChromium, screenshotPath } from './chromium.js';
import { startUiStack, type UiStack } from './ui-stack.js';

/** The `data-*` of every attempt lane on the page, in order. */
function lanes(page: Page) {
  return page.locator('.lane').evaluateAll((els) =>
    els.map((el) => ({
      epoch: el.getAttribute('data-epoch'),
      worker: el.getAttribute('data-worker'),
      outcome: el.getAttribute('data-outcome'),
    })),
  );
}

describe('a run page follows a run live (real workers)', requiresChromium(), () => {
  let stack: UiStack;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    stack = await startUiStack({ toolDelayMs: 700 });
    await stack.fleet.spawnWorker('ui-worker-a');
    await stack.fleet.spawnWorker('ui-worker-b');
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
  });
  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
  });

  it("shows the second attempt's lane appear, without a reload, after the worker holding the run is SIGKILLed", async () => {
    const { client } = stack.fleet;
    const run = await client.enqueueRun({
      entity: TEAM,
      input: "Research 'cairns'",
      checkpoint: 'tool-batch',
    });
    await page.goto(`${stack.baseUrl}/ui/runs/${run.runId}`);
    expect(await page.getAttribute('#run', 'data-live')).toBe('1');

    let holder: string | undefined;
    await waitFor(
      async () => {
        const view = await client.getRun(run.runId);
        holder = holderOf(view);
        return (
          holder !== undefined && (view?.member_runs[0]?.last_checkpoint_at_message_index ?? 0) >= 3
        );
      },
      30_000,
      "the member's first checkpoint",
    );
    await page.waitForSelector(
      `.lane[data-epoch="1"][data-outcome="running"][data-worker="${holder}"]`,
    );
    await page.waitForSelector('[data-member-run-id]');
    const navigations: string[] = [];
    page.on('framenavigated', (frame) => void navigations.push(frame.url()));

    const victim = stack.fleet.workers.find((w) => w.id === holder)!;
    victim.kill('SIGKILL');
    await victim.exited;

    await page.waitForSelector('.lane[data-epoch="2"]', { timeout: 30_000 });
    await page.waitForSelector('#run[data-status="COMPLETED"]', { timeout: 60_000 });
    expect(navigations).toEqual([]);
    const survivor = stack.fleet.workers.find((w) => w.id !== holder)!.id;
    expect(await lanes(page)).toEqual([
      { epoch: '1', worker: holder, outcome: 'superseded' },
      { epoch: '2', worker: survivor, outcome: 'completed' },
    ]);
    expect(await page.locator('.lane[data-epoch="2"] .lane-label').textContent()).toContain(
      'recovered',
    );
    // The team's tail holds its member's events too, marked with the member's path; the team's RunCompleted ends it.
    await page.waitForSelector('#tail li[data-type="RunCompleted"]:not([data-member-path])');
    const tail = await page
      .locator('#tail li')
      .evaluateAll((items) =>
        items.map((li) => [li.getAttribute('data-type'), li.getAttribute('data-member-path')]),
      );
    expect(tail.map(([type]) => type)).toContain('RunContinued');
    expect(tail.at(-1)).toEqual(['RunCompleted', null]);
    expect(tail).toContainEqual(['ToolCallCompleted', 'research-team/researcher']);
    // Each line in words, the member named; the raw event behind the toggle.
    const words = await page.locator('#tail li .tail-words').allTextContents();
    expect(words).toContainEqual(
      expect.stringMatching(/^researcher: slow_fetch_detail completed in \d+\.\d\d s$/),
    );
    expect(words).toContainEqual(
      expect.stringMatching(
        /^researcher: scripted:researcher answered in \d+\.\d\d s with 1 tool call/,
      ),
    );
    expect(words).toContainEqual(expect.stringMatching(/^resumed \(recovered\) on worker /));
    expect(words.at(-1)).toBe('completed');
    const raw = page.locator('#tail li .tail-raw').last();
    expect(await raw.isVisible()).toBe(false);
    await page.check('#tail-raw');
    expect(await raw.isVisible()).toBe(true);
    expect(await raw.textContent()).toContain('RunCompleted');
    expect(await page.locator('[data-refresh="content"] .answer').textContent()).toContain(
      'cairns',
    );
    // The team's answer streamed into the page word by word before it was stored.
    expect(await page.locator('#live-text').textContent()).toContain(
      'Summary of the research team',
    );
    expect(await page.locator('.tools [data-tool-call-id]').first().textContent()).toContain(
      'delegate_task_to_member',
    );
    await page.screenshot({ path: screenshotPath('run-after-crash.png'), fullPage: true });

    // The member run is nested and linked; its page shows its own attempts and links back.
    await page.locator('[data-member-run-id] a').first().click();
    await page.waitForSelector('.lane');
    expect((await lanes(page)).length).toBeGreaterThanOrEqual(2);
    // The researcher searches once, then fetches each of the three results in its own batch.
    expect(await page.locator('.batch').count()).toBe(4);
    expect(await page.locator('.tools [data-tool-call-id] strong').allTextContents()).toEqual([
      'slow_search',
      'slow_fetch_detail',
      'slow_fetch_detail',
      'slow_fetch_detail',
    ]);
    expect(await page.locator('.lane .checkpoint').count()).toBeGreaterThanOrEqual(4);
    expect(await page.getAttribute(`.run-header a[href="/ui/runs/${run.runId}"]`, 'href')).toBe(
      `/ui/runs/${run.runId}`,
    );
  });

  it('cancels a running run from its page', async () => {
    const { client } = stack.fleet;
    const run = await client.enqueueRun({
      entity: RESEARCHER,
      input: "Research 'cairns'",
      checkpoint: 'tool-batch',
    });
    await page.goto(`${stack.baseUrl}/ui/runs/${run.runId}`);
    await page.waitForSelector('#run[data-status="RUNNING"]', { timeout: 30_000 });
    await page.click('button[data-command="cancel"]');
    await page.waitForSelector('#run[data-status="CANCELLED"]', { timeout: 30_000 });
    expect(await client.getRunStatus(run.runId)).toBe('CANCELLED');
    expect(await page.isDisabled('button[data-command="cancel"]')).toBe(true);
    expect((await lanes(page)).at(-1)?.outcome).toBe('cancelled');
  });
});
