import { Engine, RUN_STATUSES, type Message } from '@cairn/engine';
import pg from 'pg';
import { createRegistry } from '@cairn/research-team';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESEARCHER, TEAM } from '../fleet/fleet.js';
import { requiresChromium } from '@cairn/services';
import { launchChromium, screenshotPath } from './chromium.js';
import { startUiStack, storeFinishedRun, type UiStack } from './ui-stack.js';

/** A long agent history: user input, then assistant tool calls and tool results in turn. */
function longHistory(count: number): Message[] {
  const messages: Message[] = [{ role: 'user', content: 'message 0: the input' }];
  for (let i = 1; i < count; i++) {
    messages.push(
      i % 2 === 1
        ? {
            role: 'assistant',
            content: `message ${i}`,
            toolCalls: [{ id: `call-${i}`, name: 'slow_search', arguments: `{"query":"q${i}"}` }],
          }
        : {
            role: 'tool',
            toolCallId: `call-${i - 1}`,
            name: 'slow_search',
            content: `message ${i}: result`,
          },
    );
  }
  return messages;
}

describe('run pages in a browser (sign-in off)', requiresChromium(), () => {
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

  it('lists runs newest first, filters by status, entity and paused, and pages past 50 runs', async () => {
    const { client } = stack.fleet;
    const pending = await client.enqueueRun({ entity: TEAM, input: 'Research the list' });
    const completed = await storeFinishedRun(
      stack.fleet,
      { entity: RESEARCHER, input: 'done already' },
      'COMPLETED',
      [
        { role: 'user', content: 'done already' },
        { role: 'assistant', content: 'done' },
      ],
    );
    const failed = await storeFinishedRun(
      stack.fleet,
      { entity: RESEARCHER, input: 'fails' },
      'ERROR',
      [],
    );

    await page.goto(`${stack.baseUrl}/ui`);
    const rows = page.locator('#run-table tbody tr');
    expect(
      await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-run-id'))),
    ).toEqual([failed, completed, pending.runId]);
    await page.screenshot({ path: screenshotPath('run-list.png'), fullPage: true });

    await page.selectOption('select[name=status]', 'COMPLETED');
    await page.click('#run-filters button[type=submit]');
    await page.waitForURL(/status=COMPLETED/);
    expect(
      await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-run-id'))),
    ).toEqual([completed]);

    await page.goto(`${stack.baseUrl}/ui`);
    await page.fill('input[name=entity]', 'research-team');
    await page.click('#run-filters button[type=submit]');
    await page.waitForURL(/entity=research-team/);
    expect(
      await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-run-id'))),
    ).toEqual([pending.runId]);

    await page.goto(`${stack.baseUrl}/ui`);
    await page.selectOption('select[name=waiting]', 'person');
    await page.click('#run-filters button[type=submit]');
    await page.waitForURL(/waiting=person/);
    expect(await page.locator('p.empty').textContent()).toContain('No runs match');

    for (let i = 0; i < 50; i++)
      await client.engine.createRun({ entity: RESEARCHER, input: `bulk ${i}` });
    await page.goto(`${stack.baseUrl}/ui`);
    expect(await rows.count()).toBe(50);
    await page.click('a[rel=next]');
    await page.waitForURL(/page=2/);
    expect(
      await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-run-id'))),
    ).toEqual([failed, completed, pending.runId]);
    expect(await page.locator('a[rel=next]').count()).toBe(0);
  });

  it('continues and forks from the buttons, and shows the server refusing what the run does not allow', async () => {
    const { client } = stack.fleet;
    const completed = await storeFinishedRun(
      stack.fleet,
      { entity: RESEARCHER, input: 'finished' },
      'COMPLETED',
      [
        { role: 'user', content: 'finished' },
        { role: 'assistant', content: 'done' },
      ],
    );
    await page.goto(`${stack.baseUrl}/ui/runs/${completed}`);
    await page.click('button[data-command="continue"]');
    await expect.poll(() => page.textContent('#flash')).toContain('continue refused: 409');
    expect(await client.getRunStatus(completed)).toBe('COMPLETED');

    await page.fill('#continue-input', 'And now the follow-up');
    await page.click('button[data-command="fork"]');
    await page.waitForURL(
      (url) => url.pathname.startsWith('/ui/runs/') && !url.pathname.endsWith(completed),
    );
    const forkId = (await page.getAttribute('#run', 'data-run-id'))!;
    const fork = (await client.getRun(forkId))!;
    expect(fork).toMatchObject({
      entity: RESEARCHER,
      status: 'PENDING',
      input: 'And now the follow-up',
    });

    const failed = await storeFinishedRun(
      stack.fleet,
      { entity: RESEARCHER, input: 'failed' },
      'ERROR',
      [],
    );
    await page.goto(`${stack.baseUrl}/ui/runs/${failed}`);
    expect(await page.textContent('.error-box')).toContain('model unavailable');
    await page.click('button[data-command="continue"]');
    // Resumed in place: a continue job waits for a worker, the run keeps its id.
    await expect.poll(() => page.textContent('#flash')).toBe('continue: resume, status ERROR');
    expect(await stack.fleet.runQueueLiveJob(failed)).toBe(true);
  });

  it("shows a run's definition hash, and continues a run in DefinitionChangedError on the new definition from its button", async () => {
    const { client, store } = stack.fleet;
    const run = await client.engine.createRun({
      entity: RESEARCHER,
      input: 'started before a deploy',
      checkpoint: 'tool-batch',
    });
    const current = createRegistry().describe(RESEARCHER)!.definitionHash!;
    // Stamped by an older deploy's definition; a worker of this one leaves it, then (grace over) ends it in ERROR.
    await store.db
      .updateTable('runs')
      .set({ definition_hash: 'a1b2c3d4e5f60718' })
      .where('run_id', '=', run.runId)
      .execute();
    const worker = new Engine({
      store: store,
      registry: createRegistry(),
      workerId: 'test-worker',
      versionGraceMs: 0,
    });
    expect(
      await worker.processPickup({ job: 'run', runId: run.runId, attemptsStarted: 1 }),
    ).toEqual({ kind: 'finished', status: 'ERROR' });

    await page.goto(`${stack.baseUrl}/ui/runs/${run.runId}`);
    expect(await page.textContent('.run-header')).toContain('a1b2c3d4e5f60718');
    expect(await page.textContent('.error-box')).toContain(`the workers have ${current}`);
    await page.click('button[data-command="upgrade"]');
    await expect.poll(() => page.textContent('#flash')).toBe('upgrade: resume, status ERROR');
    const waiting = (await store.getRun(run.runId))!.waitingContinueRequestId!;
    expect(await store.readContinueRequest(run.runId, waiting)).toMatchObject({
      upgrade: true,
    });
    expect(await stack.fleet.runQueueLiveJob(run.runId)).toBe(true);

    const other = await storeFinishedRun(
      stack.fleet,
      { entity: RESEARCHER, input: 'failed otherwise' },
      'ERROR',
      [],
    );
    await page.goto(`${stack.baseUrl}/ui/runs/${other}`);
    expect(await page.locator('button[data-command="upgrade"]').count()).toBe(0);
  });

  it("shows the fleet overview above the list, each count the store's and a link to the runs it counts", async () => {
    const { client } = stack.fleet;
    await storeFinishedRun(stack.fleet, { entity: RESEARCHER, input: 'overview ok' }, 'COMPLETED', [
      { role: 'user', content: 'overview ok' },
      { role: 'assistant', content: 'done' },
    ]);
    await storeFinishedRun(
      stack.fleet,
      { entity: RESEARCHER, input: 'overview failed' },
      'ERROR',
      [],
    );
    await client.enqueueRun({ entity: RESEARCHER, input: 'overview queued' });
    // What a tenant's runs cost today, as the commits count it.
    const pool = new pg.Pool({ connectionString: stack.fleet.db.url, max: 1 });
    await pool.query(
      `insert into tenant_day_spend (tenant_id, day, cost_micro_usd)
       values ('acme', (now() at time zone 'utc')::date, 1234500)
       on conflict (tenant_id, day) do update set cost_micro_usd = excluded.cost_micro_usd`,
    );
    await pool.end();

    await page.goto(`${stack.baseUrl}/ui`);
    const count = async (name: string) =>
      Number(await page.textContent(`#fleet-overview [data-overview="${name}"]`));
    let total = 0;
    for (const status of RUN_STATUSES) {
      const stored = (await client.listRuns({ statuses: [status], limit: 10_000 })).runs.length;
      expect(await count(`status-${status}`), status).toBe(stored);
      total += stored;
    }
    // Every run here was created within the hour; the ended ones ended in it.
    expect(await count('created')).toBe(total);
    expect(await count('completed')).toBe(await count('status-COMPLETED'));
    expect(await count('error')).toBe(await count('status-ERROR'));
    expect(await page.textContent('#fleet-overview [data-overview="p50"]')).toMatch(
      /^\d+\.\d\d s$/,
    );
    expect(await count('pending-actions')).toBe(0);
    expect(await page.textContent('#fleet-overview [data-spend-tenant="acme"]')).toContain(
      '$1.2345',
    );
    await page.screenshot({ path: screenshotPath('fleet-overview.png'), fullPage: true });

    await page.click('#fleet-overview [data-overview="status-ERROR"]');
    await page.waitForURL((url) => url.searchParams.get('status') === 'ERROR');
    const statuses = await page.locator('#run-table tbody tr td:nth-child(3)').allTextContents();
    expect(statuses.length).toBe(await count('status-ERROR'));
    for (const shown of statuses) expect(shown).toContain('ERROR');
  });

  it('a bad filter value is a 400 naming the parameter', async () => {
    const res = await page.goto(`${stack.baseUrl}/ui?status=DONE`);
    expect(res?.status()).toBe(400);
    expect(await page.textContent('body')).toContain('status: must be one of PENDING');
  });

  it('keeps a run of 5,000 messages usable: one page of 100 in the page, the newest first, the rest a click away', async () => {
    const runId = await storeFinishedRun(
      stack.fleet,
      { entity: RESEARCHER, input: 'message 0: the input' },
      'COMPLETED',
      longHistory(5000),
    );
    await page.goto(`${stack.baseUrl}/ui/runs/${runId}`);
    const messages = page.locator('li.message');
    expect(await messages.count()).toBe(100);
    expect(await messages.first().getAttribute('data-index')).toBe('4900');
    expect(await messages.last().textContent()).toContain('message 4999');
    expect(await page.locator('#messages nav.pager').first().textContent()).toContain(
      'page 50 of 50',
    );

    await page.locator('#messages a[rel=first]').first().click();
    await page.waitForURL(/page=1/);
    expect(await messages.count()).toBe(100);
    expect(await messages.first().textContent()).toContain('message 0: the input');
    await page.locator('#messages a[rel=next]').first().click();
    await page.waitForURL(/page=2/);
    expect(await messages.first().getAttribute('data-index')).toBe('100');
    // The whole document stays small: a page of messages, not five thousand.
    expect(await page.locator('*').count()).toBeLessThan(3000);
  });

  it('loads nothing from another origin: script and styles come from the producer', async () => {
    const requested: string[] = [];
    page.on('request', (request) => void requested.push(request.url()));
    await page.goto(`${stack.baseUrl}/ui`);
    expect(requested.length).toBeGreaterThanOrEqual(3);
    expect(requested.filter((url) => !url.startsWith(stack.baseUrl))).toEqual([]);
    // The stylesheet applied: the top bar is laid out by it.
    expect(
      await page.evaluate("getComputedStyle(document.querySelector('header.top')).display"),
    ).toBe('flex');
  });
});
