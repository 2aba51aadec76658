import { Engine, type Permit } from '@cairn/engine';
import { createRegistry } from '@cairn/research-team';
import { requiresChromium } from '@cairn/services';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESEARCHER } from '../fleet/fleet.js';
import { launchChromium, screenshotPath } from './chromium.js';
import { startUiStack, type UiStack } from './ui-stack.js';

// A run parked for model capacity, as its pages show it: parked for real by the engine's
// fenced park write, on the Postgres limiter with no room for the researcher's model.

const MODEL = 'scripted:researcher';

/** Text as a person reads it: runs of whitespace (the template's line breaks) as one space. */
const words = (text: string | null) => (text ?? '').replace(/\s+/g, ' ').trim();

describe('pages of a run parked for model capacity', requiresChromium(), () => {
  let stack: UiStack;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    stack = await startUiStack();
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  });
  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
  });

  it('show what it waits for (model, until when) on its page and in the list, its priority and deadline, and its parked attempt then the one that resumed it', async () => {
    const { client, store } = stack.fleet;
    const limiter = store.modelCapacity;
    const limit = { concurrency: 1 };
    // A worker's engine, governed by the limiter: no permit within 100 ms parks the run.
    const worker = new Engine({
      store: store,
      registry: createRegistry(),
      workerId: 'test-worker',
      capacity: { limiter, limits: [{ model: MODEL, ...limit }], waitMs: 100, pollMs: 25 },
    });
    // Another run of the fleet holds the model's only slot.
    const held = await limiter.tryAcquire({
      model: MODEL,
      limit,
      waiterId: 'another-run',
      tenant: '',
      weight: 1,
      priority: 5,
      waitedMs: 0,
      tokens: 1,
    });
    if (!held.granted) throw new Error(`the slot was not free: ${held.reason}`);
    const permit: Permit = held.permit;
    const run = await client.engine.createRun({
      entity: RESEARCHER,
      input: 'Research cairns, when there is room',
      checkpoint: 'tool-batch',
      priority: 3,
      deadlineMs: 3_600_000,
    });
    const parked = await worker.processPickup({
      job: 'run',
      runId: run.runId,
      attemptsStarted: 1,
    });
    expect(parked.kind).toBe('parked');
    const view = (await client.getRun(run.runId))!;
    expect(view.status).toBe('RUNNING');
    const until = view.waiting!.until;
    // The page shows the time to the second, in UTC.
    const untilShown = `${until.slice(11, 19)}Z`;

    await page.goto(`${stack.baseUrl}/ui/runs/${run.runId}`);
    const note = words(await page.textContent('.run-header .run-waiting'));
    expect(note).toContain(`waiting for capacity: ${MODEL} until`);
    expect(note).toContain(untilShown);
    expect(await page.getAttribute('.run-header .run-waiting time', 'datetime')).toBe(until);
    expect(words(await page.textContent('.run-header [data-priority]'))).toMatch(/^3 /);
    // Its deadline, an hour from its creation: when, and how long is left.
    const deadline = page.locator('.run-header [data-deadline-at]');
    expect(await deadline.getAttribute('data-deadline-at')).toBe(view.deadline_at);
    expect(words(await deadline.textContent())).toMatch(/\(in (59 min( \d+ s)?|1 h)\)$/);
    const lanes = page.locator('.timeline .lane');
    expect(await lanes.count()).toBe(1);
    expect(await lanes.first().getAttribute('data-outcome')).toBe('parked');
    const parkedLane = words(await lanes.first().textContent());
    expect(parkedLane).toContain(`parked for model capacity: ${MODEL}, due`);
    expect(parkedLane).toContain(untilShown);
    await page.screenshot({ path: screenshotPath('run-parked-for-capacity.png'), fullPage: true });

    await page.goto(`${stack.baseUrl}/ui`);
    const row = page.locator(`#run-table tr[data-run-id="${run.runId}"]`);
    const status = words(await row.locator('td').nth(2).textContent());
    expect(status).toContain(`RUNNING · waiting for capacity: ${MODEL} until`);
    expect(status).toContain(untilShown);
    await page.screenshot({ path: screenshotPath('run-list-parked.png'), fullPage: true });

    // Room again: the queue's next pickup of the parked job claims with reason `capacity`.
    await page.goto(`${stack.baseUrl}/ui/runs/${run.runId}`);
    await limiter.release(permit, { ok: true });
    expect(
      await worker.processPickup({
        job: 'run',
        runId: run.runId,
        attemptsStarted: 2,
        parkedAttempt: 1,
        capacityWaitedMs: parked.kind === 'parked' ? parked.park.waitedMs : 0,
      }),
    ).toEqual({ kind: 'finished', status: 'COMPLETED' });
    // The open page follows the run: the wait goes, a second lane tells why it began.
    await expect.poll(() => page.getAttribute('#run', 'data-status')).toBe('COMPLETED');
    await expect.poll(() => page.locator('.run-header .run-waiting').count()).toBe(0);
    // Finished: the deadline no longer counts down.
    expect(words(await deadline.textContent())).not.toContain('(in');
    await expect.poll(() => lanes.count()).toBe(2);
    expect(await lanes.nth(0).getAttribute('data-outcome')).toBe('parked');
    expect(await lanes.nth(1).getAttribute('data-reason')).toBe('capacity');
    expect(await lanes.nth(1).getAttribute('data-outcome')).toBe('completed');
    expect(words(await lanes.nth(1).textContent())).toContain(
      'capacity (resumed after waiting for model capacity)',
    );
    await page.screenshot({
      path: screenshotPath('run-resumed-after-capacity.png'),
      fullPage: true,
    });

    await page.goto(`${stack.baseUrl}/ui`);
    expect(words(await row.locator('td').nth(2).textContent())).toBe('COMPLETED');
  });
});
