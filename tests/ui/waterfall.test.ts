import { DELEGATE_TOOL_NAME, Engine } from '@cairn/engine';
import { createRegistry } from '@cairn/research-team';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { holderOf, RESEARCHER, TEAM, waitFor } from '../fleet/fleet.js';
import { requiresChromium } from '@cairn/services';
import { launchChromium, screenshotPath } from './chromium.js';
import { startUiStack, type UiStack } from './ui-stack.js';

/** The `data-*` of a run's own attempt lanes in the waterfall (not its members'), in order. */
function lanesOf(page: Page, runId: string) {
  return page.locator(`[data-wf-run="${runId}"] > .wf-lane`).evaluateAll((els) =>
    els.map((el) => ({
      epoch: el.getAttribute('data-epoch'),
      worker: el.getAttribute('data-worker'),
      reason: el.getAttribute('data-reason'),
      outcome: el.getAttribute('data-outcome'),
    })),
  );
}

/** A bar's drawn width in pixels. */
function widthOf(page: Page, selector: string): Promise<number> {
  return page
    .locator(selector)
    .first()
    .evaluate((el) => el.getBoundingClientRect().width);
}

/**
 * Run in the page: records, as the DOM changes, each live turn's text length
 * (by run and turn) with the run's status then, in `window.liveTextSeen`. The
 * page records every change itself, so a loaded machine cannot make the test
 * miss the words' arrival between two polls.
 */
const RECORD_LIVE_TEXT = `(() => {
  const seen = (window.liveTextSeen = {});
  const record = () => {
    for (const el of document.querySelectorAll('.wf-row[data-live-turn] .wf-bar-text')) {
      const key = el.closest('[data-wf-run]').dataset.wfRun + ' ' + el.closest('[data-live-turn]').dataset.liveTurn;
      const lengths = (seen[key] ??= []);
      const length = el.textContent.length;
      if (length > 0 && lengths.at(-1)?.length !== length)
        lengths.push({ length, status: document.getElementById('run').dataset.status });
    }
  };
  new MutationObserver(record).observe(document.body, { subtree: true, childList: true, characterData: true });
})()`;

/** Run in the page: whether one live turn's text grew while the run was RUNNING (see {@link RECORD_LIVE_TEXT}). */
const LIVE_TEXT_GREW = `Object.values(window.liveTextSeen).some((lengths) =>
  lengths.some((seen, i) => i > 0 && seen.length > lengths[i - 1].length && seen.status === 'RUNNING'))`;

describe('the run page waterfall (real workers)', requiresChromium(), () => {
  let stack: UiStack;
  let browser: Browser;
  let page: Page;
  /** The team run the first test drove through a crash, finished. */
  let teamRunId: string;

  beforeAll(async () => {
    stack = await startUiStack({ toolDelayMs: 700 });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
  });
  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
  });

  // Before the fleet's workers start: this run is driven by an engine in the test, governed by the Postgres limiter.
  it('marks a park for model capacity as a gap that grows while the run waits, between its two lanes once resumed', async () => {
    const { client, store } = stack.fleet;
    const model = 'scripted:researcher';
    const limiter = store.modelCapacity;
    const limit = { concurrency: 1 };
    const worker = new Engine({
      store: store,
      registry: createRegistry(),
      workerId: 'test-worker',
      capacity: { limiter, limits: [{ model, ...limit }], waitMs: 100, pollMs: 25 },
    });
    // Another run holds the model's only slot: the run parks.
    const held = await limiter.tryAcquire({
      model,
      limit,
      waiterId: 'another-run',
      tenant: '',
      weight: 1,
      priority: 5,
      waitedMs: 0,
      tokens: 1,
    });
    if (!held.granted) throw new Error(`the slot was not free: ${held.reason}`);
    const run = await client.engine.createRun({
      entity: RESEARCHER,
      input: 'Research cairns, when there is room',
      checkpoint: 'tool-batch',
    });
    const parked = await worker.processPickup({ job: 'run', runId: run.runId, attemptsStarted: 1 });
    expect(parked.kind).toBe('parked');

    await page.goto(`${stack.baseUrl}/ui/runs/${run.runId}`);
    const own = `[data-wf-run="${run.runId}"]`;
    const gap = page.locator(`${own} > .wf-gap[data-wait="capacity"]`);
    expect(await gap.locator('.wf-name').textContent()).toContain(
      `parked for model capacity: ${model}`,
    );
    const open = `${own} > .wf-gap[data-wait="capacity"] .wf-wait:not([data-e])`;
    const before = await widthOf(page, open);
    // The page's script grows the open gap as time passes, without a reload.
    await expect.poll(() => widthOf(page, open), { interval: 100 }).toBeGreaterThan(before + 5);
    await page.locator('#waterfall').screenshot({ path: screenshotPath('waterfall-parked.png') });

    await limiter.release(held.permit, { ok: true });
    expect(
      await worker.processPickup({
        job: 'run',
        runId: run.runId,
        attemptsStarted: 2,
        parkedAttempt: 1,
        capacityWaitedMs: parked.kind === 'parked' ? parked.park.waitedMs : 0,
      }),
    ).toEqual({ kind: 'finished', status: 'COMPLETED' });
    await page.waitForSelector('#run[data-status="COMPLETED"]', { timeout: 15_000 });
    await expect
      .poll(() => lanesOf(page, run.runId))
      .toEqual([
        { epoch: '1', worker: 'test-worker', reason: 'run', outcome: 'parked' },
        { epoch: '2', worker: 'test-worker', reason: 'capacity', outcome: 'completed' },
      ]);
    // The gap sits between the lanes, closed at the second attempt's start.
    expect(
      await gap.evaluate((el) => [
        el.previousElementSibling?.getAttribute('data-epoch'),
        el.nextElementSibling?.getAttribute('data-epoch'),
        el.querySelector('.wf-wait')?.hasAttribute('data-e'),
      ]),
    ).toEqual(['1', '2', true]);
    // The resumed attempt's model turns and tool calls are drawn in its lane.
    const resumed = page.locator(`${own} > .wf-lane[data-epoch="2"]`);
    expect(await resumed.locator('.wf-row[data-bar="tool"]').count()).toBe(4);
    expect(await resumed.locator('.wf-row[data-bar="turn"]').count()).toBe(5);
  });

  it('marks a pause at the budget as a gap of its own, open while it waits for a decision', async () => {
    const worker = new Engine({
      store: stack.fleet.store,
      registry: createRegistry(),
      workerId: 'test-worker',
    });
    // The budget is checked before the first request: the run pauses at once.
    const run = await worker.createRun({
      entity: RESEARCHER,
      input: 'Research cairns on a budget',
      checkpoint: 'tool-batch',
      budget: { maxTokens: 1 },
    });
    expect(
      await worker.processPickup({ job: 'run', runId: run.runId, attemptsStarted: 1 }),
    ).toEqual({ kind: 'finished', status: 'PAUSED' });
    await page.goto(`${stack.baseUrl}/ui/runs/${run.runId}`);
    const gap = page.locator(`[data-wf-run="${run.runId}"] > .wf-gap[data-wait="budget"]`);
    expect(await gap.locator('.wf-name').textContent()).toContain(
      'paused at its budget: 1 action to decide',
    );
    expect(await gap.locator('.wf-wait').getAttribute('data-e')).toBeNull();
    expect(
      await page.locator(`[data-wf-run="${run.runId}"] > .wf-lane`).getAttribute('data-outcome'),
    ).toBe('paused');
  });

  describe('with two workers', () => {
    // Started together in a hook, after the tests above (their runs are driven by an engine in the
    // test); one is SIGKILLed by the test below, the other recovers its run.
    beforeAll(async () => {
      // Each model turn takes 1 s, over which an answer streams word by word.
      const slowModel = { RESEARCH_MODEL_LATENCY_MS: '1000' };
      await Promise.all([
        stack.fleet.spawnWorker('wf-worker-a', slowModel),
        stack.fleet.spawnWorker('wf-worker-b', slowModel),
      ]);
    });

    it('grows while the team runs, then shows the SIGKILLed run as two lanes with the member nested under its delegation', async () => {
      const { client } = stack.fleet;
      const run = await client.enqueueRun({
        entity: TEAM,
        input: "Research 'cairns'",
        checkpoint: 'tool-batch',
      });
      teamRunId = run.runId;
      const navigations: string[] = [];
      await page.goto(`${stack.baseUrl}/ui/runs/${run.runId}`);
      page.on('framenavigated', (frame) => void navigations.push(frame.url()));
      await page.evaluate(RECORD_LIVE_TEXT);
      const own = `[data-wf-run="${run.runId}"]`;

      // Live: the delegation's bar is open (no end) and grows as time passes, without a reload.
      const open = `${own} > .wf-lane > .wf-row[data-bar="tool"]:has(.wf-bar:not([data-e]))`;
      await page.waitForSelector(open, { timeout: 30_000 });
      const callId = await page.locator(open).first().getAttribute('data-tool-call-id');
      // Found by its call: a refresh of the section draws the bar again (at the server's width until the script grows it).
      const delegation = `${own} > .wf-lane > .wf-row[data-tool-call-id="${callId}"] .wf-bar`;
      await expect.poll(() => widthOf(page, delegation), { interval: 50 }).toBeGreaterThan(0);
      const before = await widthOf(page, delegation);
      await expect
        .poll(() => widthOf(page, delegation), { interval: 100, timeout: 10_000 })
        .toBeGreaterThan(before + 5);

      // The member's tool calls appear under the delegation as its batches commit.
      let holder: string | undefined;
      await waitFor(
        async () => {
          const view = await client.getRun(run.runId);
          holder = holderOf(view);
          return (
            holder !== undefined &&
            (view?.member_runs[0]?.last_checkpoint_at_message_index ?? 0) >= 3
          );
        },
        30_000,
        "the member's first checkpoint",
      );
      await page.waitForSelector(`${own} .wf-member .wf-row[data-bar="tool"]`, {
        state: 'attached',
        timeout: 15_000,
      });
      await page.locator('#waterfall').screenshot({ path: screenshotPath('waterfall-live.png') });

      // An answer's text shows in a bar of its own while it streams, before any stored event
      // draws its turn: the same bar's text grows as the words arrive, while the run is RUNNING.
      const streaming = expect
        .poll(() => page.evaluate(LIVE_TEXT_GREW), { timeout: 60_000 })
        .toBe(true);
      streaming.catch(() => undefined);
      // SIGKILL the worker holding the team while its member works through its batches (700 ms per fetch).
      const victim = stack.fleet.workers.find((w) => w.id === holder)!;
      victim.kill('SIGKILL');
      await victim.exited;
      await page.waitForSelector(`${own} > .wf-lane[data-epoch="2"]`, { timeout: 30_000 });
      await streaming;
      await page.waitForSelector('#run[data-status="COMPLETED"]', { timeout: 60_000 });
      expect(navigations).toEqual([]);

      const survivor = stack.fleet.workers.find((w) => w.id !== holder)!.id;
      expect(await lanesOf(page, run.runId)).toEqual([
        { epoch: '1', worker: holder, reason: 'run', outcome: 'superseded' },
        { epoch: '2', worker: survivor, reason: 'recovered', outcome: 'completed' },
      ]);
      // Between them, the time no worker held the team: a marked gap.
      expect(await page.locator(`${own} > .wf-gap[data-wait="recovery"]`).count()).toBe(1);
      expect(await page.locator(`${own} > .wf-lane .wf-checkpoint`).count()).toBeGreaterThan(0);

      // The member hangs under its delegation's bar, collapsed, and expands to its own lanes.
      const view = (await client.getRun(run.runId))!;
      const member = view.member_runs[0]!;
      const nested = page.locator(`${own} > .wf-lane > details.wf-member`);
      expect(await nested.count()).toBe(1);
      expect(await nested.getAttribute('data-member-run-id')).toBe(member.run_id);
      expect(
        await nested.evaluate(
          (el) => el.previousElementSibling?.querySelector('strong')?.textContent,
        ),
      ).toBe(DELEGATE_TOOL_NAME);
      const memberLanes = nested.locator(`[data-wf-run="${member.run_id}"] > .wf-lane`);
      expect(await memberLanes.first().isVisible()).toBe(false);
      await nested.locator('summary').click();
      expect(await memberLanes.first().isVisible()).toBe(true);
      expect(await memberLanes.count()).toBe(member.attempts.length);
      expect(
        await nested.locator('.wf-row[data-bar="tool"] .wf-name strong').allTextContents(),
      ).toEqual(member.tools.map((t) => t.name));

      // A click on a member's tool bar shows its args and result.
      const fetch = member.tools.find((t) => t.name === 'slow_fetch_detail')!;
      await nested.locator(`.wf-row[data-tool-call-id="${fetch.tool_call_id}"] .wf-bar`).click();
      const panel = page.locator('#wf-panel');
      await panel.waitFor({ state: 'visible' });
      expect(JSON.parse((await panel.locator('.wf-args').textContent()) ?? '')).toEqual(fetch.args);
      expect(await panel.locator('.wf-result').textContent()).toContain(fetch.result);
      expect(navigations).toEqual([]);

      // The team's last turn streamed its answer into its bar; a click shows its request and response.
      const answerBar = page.locator(`${own} > .wf-lane[data-epoch="2"] .wf-bar[data-turn]`).last();
      // (the bar shows the text's tail as it arrives, its title the whole text)
      expect(await answerBar.getAttribute('title')).toContain('Summary of the research team');
      expect(await answerBar.locator('.wf-bar-text').textContent()).toContain(
        'Detail for result-c',
      );
      await answerBar.click();
      await panel.locator('.wf-turn-detail').waitFor();
      expect(await panel.locator('.wf-response').textContent()).toContain(
        'Summary of the research team',
      );
      expect(await panel.locator('.wf-request .role-tool').textContent()).toContain(
        DELEGATE_TOOL_NAME,
      );
      // The expanded member stays expanded across the page's refreshes.
      expect(await nested.evaluate((el) => el.hasAttribute('open'))).toBe(true);
      await page
        .locator('#waterfall')
        .screenshot({ path: screenshotPath('waterfall-after-crash.png') });
    });

    it('reads without script: the member expands and a tool bar links to its args and result', async () => {
      const context = await browser.newContext({
        javaScriptEnabled: false,
        viewport: { width: 1280, height: 1000 },
      });
      try {
        const plain = await context.newPage();
        await plain.goto(`${stack.baseUrl}/ui/runs/${teamRunId}`);
        const nested = plain.locator('details.wf-member').first();
        await nested.locator('summary').click();
        const bar = nested.locator('.wf-row[data-bar="tool"] .wf-bar').first();
        const target = (await bar.getAttribute('href'))!;
        expect(target).toMatch(/^#wf-d-\d+$/);
        expect(await plain.locator(target).isVisible()).toBe(false);
        await bar.click();
        expect(await plain.locator(target).isVisible()).toBe(true);
        expect(await plain.locator(`${target} .wf-args`).textContent()).toContain('query');
        // A turn's bar is a link to a page with its request and response.
        await plain.locator(`[data-wf-run="${teamRunId}"] .wf-bar[data-turn]`).first().click();
        await plain.waitForSelector('.wf-turn-detail');
        expect(await plain.locator('.wf-response').textContent()).toContain(DELEGATE_TOOL_NAME);
        await plain.goBack();
        await plain.screenshot({ path: screenshotPath('waterfall-no-script.png'), fullPage: true });
      } finally {
        await context.close();
      }
    });
  });
});
