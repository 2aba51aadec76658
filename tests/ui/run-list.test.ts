import type { RunStatus } from '@cairn/engine';
import { requiresChromium } from '@cairn/services';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESEARCHER, TEAM, waitFor, type SpawnedWorker } from '../fleet/fleet.js';
import { launchChromium, screenshotPath } from './chromium.js';
import { startUiStack, storeFinishedRun, type UiStack } from './ui-stack.js';

const HOUR = 3600_000;

/** The run ids of the list's rows, top to bottom. */
function rowIds(page: Page): Promise<(string | null)[]> {
  return page
    .locator('#run-table tbody tr')
    .evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-run-id')));
}

/** Run in the page: empties the filter form as a fresh list shows it (no sort kept, nothing checked). */
const EMPTY_FILTERS = `for (const field of document.querySelectorAll('#run-filters [name]')) {
  if (field.type === 'hidden') field.remove();
  else if (field.type === 'checkbox') field.checked = false;
  else field.value = '';
}`;

describe(
  'the run list in a browser: filters, sorting, search, bulk cancel (sign-in off)',
  requiresChromium(),
  () => {
    let stack: UiStack;
    let browser: Browser;
    let page: Page;

    beforeAll(async () => {
      // Tools take 3 s: a run a worker holds is still RUNNING when the last test cancels it (no worker before it).
      stack = await startUiStack({ toolDelayMs: 3000 });
      browser = await launchChromium();
      page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    });
    afterAll(async () => {
      await browser?.close();
      await stack?.stop();
    });

    /** Sets when a run was created and last updated, as hours before now. */
    async function age(runId: string, createdHoursAgo: number, updatedHoursAgo = createdHoursAgo) {
      await stack.fleet.store.db
        .updateTable('runs')
        .set({
          created_at: new Date(Date.now() - createdHoursAgo * HOUR),
          updated_at: new Date(Date.now() - updatedHoursAgo * HOUR),
        })
        .where('run_id', '=', runId)
        .execute();
    }

    /**
     * Fills the list's filter form (selects and inputs by name) and submits it; the rows' run ids.
     * The form is the one of the list already open, emptied as a fresh list shows it (one page
     * load a filter, not two), or of a list opened first.
     */
    async function filterBy(fields: Record<string, string>): Promise<(string | null)[]> {
      if (new URL(page.url(), stack.baseUrl).pathname === '/ui') await page.evaluate(EMPTY_FILTERS);
      else await page.goto(`${stack.baseUrl}/ui`);
      for (const [name, value] of Object.entries(fields)) {
        const field = page.locator(`#run-filters [name="${name}"]`);
        if ((await field.evaluate((el) => el.tagName)) === 'SELECT')
          await field.selectOption(value);
        else await field.fill(value);
      }
      await page.click('#run-filters button[type=submit]');
      await page.waitForURL((url) =>
        Object.entries(fields).every(([name]) => url.searchParams.has(name)),
      );
      return rowIds(page);
    }

    // The filters' runs: four of tenant "fjord" (and one of "tarn") at known ages, stored once and
    // read by the tests below, a handful of page loads each.
    describe('filters and search over stored runs', () => {
      let moraines: string;
      let eskers: string;
      let lichens: string;
      let parked: string;
      let paused: string;
      let other: string;

      beforeAll(async () => {
        const { store } = stack.fleet;
        const { engine } = stack.fleet.client;
        moraines = await storeFinishedRun(
          stack.fleet,
          { entity: RESEARCHER, input: 'Survey the Moraines of Skaftafell', tenantId: 'fjord' },
          'COMPLETED',
          [],
        );
        eskers = await storeFinishedRun(
          stack.fleet,
          { entity: TEAM, input: 'Map the eskers near Uppsala', tenantId: 'fjord' },
          'ERROR',
          [],
        );
        const create = async (
          entity: typeof RESEARCHER | typeof TEAM,
          input: string,
          tenantId: string,
        ) => (await engine.createRun({ entity, input, tenantId })).runId;
        lichens = await create(RESEARCHER, 'Count lichens on the ridge', 'fjord');
        parked = await create(TEAM, 'Compare glacier retreat 50% faster', 'fjord');
        paused = await create(RESEARCHER, 'Await approval for the drill', 'fjord');
        other = await create(RESEARCHER, 'Survey the moraines of another tenant', 'tarn');
        // One parked for model capacity (RUNNING), one paused for a person.
        await store.claimRun(parked, { workerId: 'test-worker', reason: 'run' });
        await store.db
          .updateTable('runs')
          .set({
            waiting: JSON.stringify({
              for: 'capacity',
              model: 'openai-chat:gpt-x',
              until: new Date(Date.now() + HOUR).toISOString(),
            }),
          })
          .where('run_id', '=', parked)
          .execute();
        await store.db
          .updateTable('runs')
          .set({ status: 'PAUSED' })
          .where('run_id', '=', paused)
          .execute();
        await age(moraines, 50, 1);
        await age(eskers, 40, 30);
        await age(lichens, 30, 2);
        await age(parked, 20, 3);
        await age(paused, 10, 25);
        await age(other, 45);
      });

      it('narrows the list by tenant, status and entity, as the store has them', async () => {
        const { client } = stack.fleet;
        expect(await filterBy({ tenant: 'fjord' })).toEqual([
          paused,
          parked,
          lichens,
          eskers,
          moraines,
        ]);
        await page.screenshot({
          path: screenshotPath('run-list-filter-tenant.png'),
          fullPage: true,
        });
        expect(await filterBy({ tenant: 'fjord', status: 'ERROR' })).toEqual([eskers]);
        const storeErrors = await client.listRuns({
          tenantId: 'fjord',
          statuses: ['ERROR'],
          limit: 50,
        });
        expect(storeErrors.runs.map((r) => r.run_id)).toEqual([eskers]);
        expect(await filterBy({ tenant: 'fjord', entity: 'research-team' })).toEqual([
          parked,
          eskers,
        ]);
      });

      it('narrows the list to the runs held for a person, for capacity or either; the paused=1 link to those for a person', async () => {
        expect(await filterBy({ tenant: 'fjord', waiting: 'person' })).toEqual([paused]);
        expect(await filterBy({ tenant: 'fjord', waiting: 'capacity' })).toEqual([parked]);
        expect(await filterBy({ tenant: 'fjord', waiting: 'either' })).toEqual([paused, parked]);
        expect(await page.locator('#run-table .waiting-note').count()).toBe(1);
        // The overview's "pending actions" link says paused=1: still the runs paused for a person.
        await page.goto(`${stack.baseUrl}/ui?tenant=fjord&paused=1`);
        expect(await rowIds(page)).toEqual([paused]);
        expect(await page.inputValue('#run-filters [name="waiting"]')).toBe('person');
      });

      it('narrows the list by a created range, an ended range and the recovered checkbox, the sort links keeping the filter', async () => {
        const { client, store } = stack.fleet;
        // Created between 45 and 25 hours ago (UTC, to the minute). Each bound is computed once:
        // the field shows the value the form sent, whatever minute it is by the time it is read.
        const utcMinute = (hoursAgo: number) =>
          new Date(Date.now() - hoursAgo * HOUR).toISOString().slice(0, 16);
        const createdFrom = utcMinute(45);
        expect(
          await filterBy({ tenant: 'fjord', created_from: createdFrom, created_to: utcMinute(25) }),
        ).toEqual([lichens, eskers]);
        expect(await page.inputValue('#run-filters [name="created_from"]')).toBe(createdFrom);
        await page.screenshot({
          path: screenshotPath('run-list-filter-created.png'),
          fullPage: true,
        });

        // Ended between 35 and half an hour ago: the finished runs only (COMPLETED 1 h ago, ERROR 30 h ago).
        expect(
          await filterBy({ tenant: 'fjord', ended_from: utcMinute(35), ended_to: utcMinute(0.5) }),
        ).toEqual([eskers, moraines]);
        expect(
          await filterBy({ tenant: 'fjord', ended_from: utcMinute(35), ended_to: utcMinute(25) }),
        ).toEqual([eskers]);
        const storeEnded = await client.listRuns({
          tenantId: 'fjord',
          endedFrom: new Date(Date.now() - 2 * HOUR),
          limit: 50,
        });
        expect(storeEnded.runs.map((r) => r.run_id)).toEqual([moraines]);
        // Recovered: a run a second worker took over after a crash (its attempt as a claim writes it).
        await store.db
          .insertInto('run_attempts')
          .values({ run_id: lichens, epoch: 99, worker_id: 'worker-b', reason: 'recovered' })
          .execute();
        await page.goto(`${stack.baseUrl}/ui?tenant=fjord`);
        await page.check('#run-filters [name="recovered"]');
        await Promise.all([
          page.waitForURL(/recovered=1/),
          page.click('#run-filters button[type=submit]'),
        ]);
        expect(await rowIds(page)).toEqual([lichens]);
        // The sort links keep the filter.
        expect(await page.getAttribute('#run-table [data-sort="updated"]', 'href')).toContain(
          'recovered=1',
        );
        expect(
          (
            await client.listRuns({
              recovered: {
                from: new Date(Date.now() - HOUR),
                before: new Date(Date.now() - HOUR / 2),
              },
              limit: 50,
            })
          ).runs,
        ).toEqual([]);
        await store.db
          .deleteFrom('run_attempts')
          .where('run_id', '=', lichens)
          .where('epoch', '=', 99)
          .execute();
      });

      it('searches a word of the input in any case, a run id or its beginning, a LIKE wildcard as a plain character', async () => {
        // A word of the input in any case (every tenant: an admin's list), a run id's beginning, a whole run id.
        expect(await filterBy({ q: 'MORAINES' })).toEqual([other, moraines]);
        expect(await filterBy({ tenant: 'fjord', q: 'moraines' })).toEqual([moraines]);
        expect(await filterBy({ q: lichens.slice(0, 13) })).toEqual([lichens]);
        expect(await filterBy({ q: parked })).toEqual([parked]);
        // A LIKE wildcard is a character like any other: "50%" is searched, not "50 then anything".
        expect(await filterBy({ q: '50%' })).toEqual([parked]);
        expect(await filterBy({ q: 'no run says this' })).toEqual([]);
        expect(await page.textContent('p.empty')).toContain('No runs match');
        await filterBy({ q: 'eskers' });
        await page.screenshot({ path: screenshotPath('run-list-search.png'), fullPage: true });
      });
    });

    it('answers a bad filter or sort value with a 400 naming the field, never a 500', async () => {
      for (const [search, message] of [
        ['created_from=2026-02-30T10:00', 'created_from: must be a date and time in UTC'],
        ['created_to=yesterday', 'created_to: must be a date and time in UTC'],
        [
          'created_from=2026-05-02T10:00&created_to=2026-05-01T10:00',
          'created_to: must be after created_from',
        ],
        ['sort=cost', 'sort: must be one of created, updated, status, entity'],
        ['sort=status&dir=up', 'dir: must be asc or desc'],
        ['waiting=soon', 'waiting: must be one of person, capacity, either'],
        ['ended_to=2026-13-01T10:00', 'ended_to: must be a date and time in UTC'],
        [
          'ended_from=2026-05-02T10:00&ended_to=2026-05-02T10:00',
          'ended_to: must be after ended_from',
        ],
        ['recovered=yes', 'recovered: must be 1'],
      ]) {
        const res = await page.goto(`${stack.baseUrl}/ui?${search}`);
        expect(res?.status(), search).toBe(400);
        expect(await page.textContent('body'), search).toContain(message);
      }
    });

    it('sorts by created, updated, status and entity from the column headers, keeping the filters, and pages through a sorted list without skipping or repeating a run', async () => {
      const { engine } = stack.fleet.client;
      // Tenant "scree": 53 runs, two entities, three statuses, created one a minute.
      const runs: {
        runId: string;
        entity: string;
        status: string;
        created: number;
        updated: number;
      }[] = [];
      for (let i = 0; i < 53; i++) {
        const entity = i % 3 === 0 ? TEAM : RESEARCHER;
        const { runId } = await engine.createRun({
          entity,
          input: `scree ${i}`,
          tenantId: 'scree',
        });
        const status = i % 4 === 0 ? 'ERROR' : i % 4 === 1 ? 'PAUSED' : 'PENDING';
        const created = 100 - i / 60;
        const updated = 10 + ((i * 7) % 53) / 60;
        await stack.fleet.store.db
          .updateTable('runs')
          .set({
            status: status as RunStatus,
            created_at: new Date(Date.now() - created * HOUR),
            updated_at: new Date(Date.now() - updated * HOUR),
          })
          .where('run_id', '=', runId)
          .execute();
        runs.push({ runId, entity: entity.name, status, created, updated });
      }
      const byCreatedDesc = [...runs].sort((a, b) => a.created - b.created).map((r) => r.runId);

      await page.goto(`${stack.baseUrl}/ui?tenant=scree`);
      expect(await rowIds(page)).toEqual(byCreatedDesc.slice(0, 50));
      expect(await page.getAttribute('th:has(a[data-sort="created"])', 'aria-sort')).toBe(
        'descending',
      );

      // Created: the list's order, and a click on its header turns it around.
      await page.click('a[data-sort="created"]');
      await page.waitForURL((url) => url.searchParams.get('dir') === 'asc');
      expect(new URL(page.url()).searchParams.get('tenant')).toBe('scree');
      expect(await rowIds(page)).toEqual([...byCreatedDesc].reverse().slice(0, 50));

      // Updated, most recent first.
      await page.click('a[data-sort="updated"]');
      await page.waitForURL((url) => url.searchParams.get('sort') === 'updated');
      const byUpdated = [...runs].sort((a, b) => a.updated - b.updated).map((r) => r.runId);
      expect(await rowIds(page)).toEqual(byUpdated.slice(0, 50));

      // Status A to Z, then by update (oldest first in that direction); both pages together hold every run once.
      await page.click('a[data-sort="status"]');
      await page.waitForURL((url) => url.searchParams.get('sort') === 'status');
      const byStatus = [...runs]
        .sort((a, b) =>
          a.status === b.status ? b.updated - a.updated : a.status < b.status ? -1 : 1,
        )
        .map((r) => r.runId);
      const first = await rowIds(page);
      expect(first).toEqual(byStatus.slice(0, 50));
      const statuses = await page
        .locator('#run-table tbody tr td:nth-child(3) .status')
        .allTextContents();
      expect(statuses).toEqual([...statuses].sort());
      await page.screenshot({ path: screenshotPath('run-list-sorted-status.png'), fullPage: true });
      await page.click('a[rel=next]');
      await page.waitForURL((url) => url.searchParams.get('page') === '2');
      expect(new URL(page.url()).searchParams.get('sort')).toBe('status');
      expect(new URL(page.url()).searchParams.get('tenant')).toBe('scree');
      const second = await rowIds(page);
      expect([...first, ...second]).toEqual(byStatus);

      // Entity Z to A (a second click), with a status filter kept across the click.
      await page.goto(`${stack.baseUrl}/ui?tenant=scree&status=PENDING&sort=entity&dir=asc`);
      await page.click('a[data-sort="entity"]');
      await page.waitForURL((url) => url.searchParams.get('dir') === 'desc');
      expect(new URL(page.url()).searchParams.get('status')).toBe('PENDING');
      const byEntityDesc = runs
        .filter((r) => r.status === 'PENDING')
        .sort((a, b) =>
          a.entity === b.entity ? a.created - b.created : a.entity < b.entity ? 1 : -1,
        )
        .map((r) => r.runId);
      expect(await rowIds(page)).toEqual(byEntityDesc);
      // The filter form keeps the order when it is submitted again.
      await page.fill('#run-filters [name="entity"]', 'researcher');
      await page.click('#run-filters button[type=submit]');
      await page.waitForURL((url) => url.searchParams.get('entity') === 'researcher');
      expect(new URL(page.url()).searchParams.get('sort')).toBe('entity');
      expect(await rowIds(page)).toEqual(
        byEntityDesc.filter((id) => runs.find((r) => r.runId === id)!.entity === 'researcher'),
      );
    });

    it('cancels the selected live runs after a confirm(), leaving the others as they were, and says what happened to each', async () => {
      const { client, store } = stack.fleet;
      const { engine } = client;
      const queued = await client.enqueueRun({
        entity: RESEARCHER,
        input: 'bulk queued',
        tenantId: 'moss',
      });
      const paused = await engine.createRun({
        entity: RESEARCHER,
        input: 'bulk paused',
        tenantId: 'moss',
      });
      await store.db
        .updateTable('runs')
        .set({ status: 'PAUSED' })
        .where('run_id', '=', paused.runId)
        .execute();
      // RUNNING, held by a worker that is gone (no live job): the cancel ends it itself.
      const orphan = await engine.createRun({
        entity: TEAM,
        input: 'bulk orphan',
        tenantId: 'moss',
      });
      await store.claimRun(orphan.runId, { workerId: 'gone-worker', reason: 'run' });
      const untouched = await client.enqueueRun({
        entity: RESEARCHER,
        input: 'bulk keep',
        tenantId: 'moss',
      });
      const done = await storeFinishedRun(
        stack.fleet,
        { entity: RESEARCHER, input: 'bulk done', tenantId: 'moss' },
        'COMPLETED',
        [],
      );

      await page.goto(`${stack.baseUrl}/ui?tenant=moss`);
      // A finished run has no checkbox.
      expect(await page.locator(`tr[data-run-id="${done}"] input[type=checkbox]`).count()).toBe(0);
      for (const runId of [queued.runId, paused.runId, orphan.runId])
        await page.check(`tr[data-run-id="${runId}"] input[name="run_id"]`);

      // Dismissing the question cancels nothing.
      let question = '';
      page.once('dialog', (dialog) => {
        question = dialog.message();
        void dialog.dismiss();
      });
      await page.click('#cancel-selected');
      await expect.poll(() => question).toBe('Cancel 3 runs? This cannot be undone.');
      expect(new URL(page.url()).pathname).toBe('/ui');
      expect(await client.getRunStatus(queued.runId)).toBe('PENDING');

      page.once('dialog', (dialog) => void dialog.accept());
      await page.click('#cancel-selected');
      await page.waitForURL((url) => url.pathname === '/ui/cancel-runs');
      const outcomes = await page
        .locator('#bulk-cancel-result tbody tr')
        .evaluateAll((trs) =>
          trs.map((tr) => [tr.getAttribute('data-run-id'), tr.getAttribute('data-outcome')]),
        );
      // In the list's order, newest first.
      expect(outcomes).toEqual([
        [orphan.runId, 'cancelled'],
        [paused.runId, 'cancelled'],
        [queued.runId, 'cancelled'],
      ]);
      expect(await page.innerText('h1')).toBe('Cancelled 3 of 3 runs');
      await page.screenshot({
        path: screenshotPath('run-list-bulk-cancel-result.png'),
        fullPage: true,
      });
      for (const runId of [queued.runId, paused.runId, orphan.runId])
        expect(await client.getRunStatus(runId), runId).toBe('CANCELLED');
      expect(await client.getRunStatus(untouched.runId)).toBe('PENDING');
      expect(await client.getRunStatus(done)).toBe('COMPLETED');
      // The queued run's job is gone with it.
      expect(await stack.fleet.runQueueLiveJob(queued.runId)).toBe(false);

      await page.click('#back-to-list');
      await page.waitForURL((url) => url.searchParams.get('tenant') === 'moss');
    });

    it('without a script, asks on a page of its own first; a run that ended meanwhile is reported as such; no GET, cross-site post or oversized selection cancels anything', async () => {
      const { client } = stack.fleet;
      const keep = await client.enqueueRun({
        entity: RESEARCHER,
        input: 'no-js keep',
        tenantId: 'heath',
      });
      const first = await client.enqueueRun({
        entity: RESEARCHER,
        input: 'no-js first',
        tenantId: 'heath',
      });
      const second = await client.enqueueRun({
        entity: RESEARCHER,
        input: 'no-js second',
        tenantId: 'heath',
      });
      const context = await browser.newContext({
        javaScriptEnabled: false,
        viewport: { width: 1400, height: 900 },
      });
      try {
        const plain = await context.newPage();
        await plain.goto(`${stack.baseUrl}/ui?tenant=heath`);
        await plain.check(`tr[data-run-id="${first.runId}"] input[name="run_id"]`);
        await plain.check(`tr[data-run-id="${second.runId}"] input[name="run_id"]`);
        await plain.click('#cancel-selected');
        await plain.waitForURL((url) => url.pathname === '/ui/cancel-runs');
        expect(await plain.innerText('h1')).toBe('Cancel 2 runs?');
        expect(
          await plain
            .locator('#bulk-cancel-selection tbody tr')
            .evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-run-id'))),
        ).toEqual([second.runId, first.runId]);
        await plain.screenshot({
          path: screenshotPath('run-list-bulk-cancel-confirm.png'),
          fullPage: true,
        });
        // Asking cancelled nothing.
        expect(await client.getRunStatus(first.runId)).toBe('PENDING');
        // Meanwhile the second is cancelled from elsewhere.
        await client.cancelRun(second.runId);
        await plain.click('#confirm-cancel');
        await plain.waitForSelector('#bulk-cancel-result');
        expect(
          await plain
            .locator('#bulk-cancel-result tbody tr')
            .evaluateAll((trs) =>
              trs.map((tr) => [tr.getAttribute('data-outcome'), tr.textContent]),
            ),
        ).toEqual([
          ['already-ended', expect.stringContaining('already ended (CANCELLED)')],
          ['cancelled', expect.stringContaining('cancelled')],
        ]);
        expect(await client.getRunStatus(first.runId)).toBe('CANCELLED');
        expect(await client.getRunStatus(keep.runId)).toBe('PENDING');
      } finally {
        await context.close();
      }

      // A GET (a stray link) cancels nothing.
      const get = await page.goto(`${stack.baseUrl}/ui/cancel-runs?run_id=${keep.runId}&confirm=1`);
      expect(get?.status()).toBe(404);
      // A form posted from another site's page is refused (sign-in is off: no CSRF token to check).
      const crossSite = await page.request.post(`${stack.baseUrl}/ui/cancel-runs`, {
        form: { run_id: keep.runId, confirm: '1' },
        headers: { Origin: 'https://elsewhere.example' },
      });
      expect(crossSite.status()).toBe(403);
      expect(await crossSite.text()).toContain(
        'bulk cancel refused: the form was posted from another site',
      );
      // More than 100 runs in one request, or none, is a 400 naming run_id.
      const many = new URLSearchParams([['confirm', '1']]);
      for (let i = 0; i < 100; i++) many.append('run_id', `r-${i}`);
      many.append('run_id', keep.runId);
      const tooMany = await page.request.post(`${stack.baseUrl}/ui/cancel-runs`, {
        data: many.toString(),
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      });
      expect(tooMany.status()).toBe(400);
      expect(await tooMany.text()).toContain('run_id: at most 100 runs per request (got 101)');
      const none = await page.request.post(`${stack.baseUrl}/ui/cancel-runs`, {
        form: { confirm: '1' },
      });
      expect(none.status()).toBe(400);
      expect(await none.text()).toContain('run_id: select at least one run to cancel');
      expect(await client.getRunStatus(keep.runId)).toBe('PENDING');
    });

    describe('with a live worker', () => {
      let worker: SpawnedWorker;

      // The worker starts in a hook (its start is not what the test is about, and may take long under load).
      beforeAll(async () => {
        const { client } = stack.fleet;
        // The earlier tests' unfinished runs are cancelled first: the worker would take their slots (or the reconciler enqueue them).
        const { runs: unfinished } = await client.listRuns({
          statuses: ['PENDING', 'RUNNING', 'PAUSED'],
          topLevelOnly: false,
          limit: 1000,
        });
        for (const run of unfinished) await client.cancelRun(run.run_id);
        worker = await stack.fleet.spawnWorker('list-worker');
      });

      it('cancels running runs a live worker holds: the worker stops them, and a run left unselected goes on', async () => {
        const { client } = stack.fleet;
        const start = (input: string) =>
          client.enqueueRun({
            entity: RESEARCHER,
            input,
            tenantId: 'cirque',
            checkpoint: 'tool-batch',
          });
        const first = await start("Research 'cairns'");
        const second = await start("Research 'tors'");
        const spared = await start("Research 'screes'");
        await waitFor(
          async () => {
            const statuses = await Promise.all(
              [first, second, spared].map((run) => client.getRunStatus(run.runId)),
            );
            return statuses.every((status) => status === 'RUNNING');
          },
          30_000,
          'the three runs RUNNING on the worker',
        );
        await page.goto(`${stack.baseUrl}/ui?tenant=cirque`);
        for (const run of [first, second])
          await page.check(`tr[data-run-id="${run.runId}"] input[name="run_id"]`);
        page.once('dialog', (dialog) => void dialog.accept());
        await page.click('#cancel-selected');
        await page.waitForSelector('#bulk-cancel-result', { timeout: 30_000 });
        expect(
          await page
            .locator('#bulk-cancel-result tbody tr')
            .evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-outcome'))),
        ).toEqual(['cancelled', 'cancelled']);
        for (const run of [first, second]) {
          const view = (await client.getRun(run.runId))!;
          expect(view.status).toBe('CANCELLED');
          // Ended by the worker that held it, on its attempt (not taken from a dead one).
          expect(view.attempts).toMatchObject([{ worker_id: worker.id, outcome: 'cancelled' }]);
        }
        await waitFor(
          async () => (await client.getRunStatus(spared.runId)) === 'COMPLETED',
          60_000,
          'the unselected run to complete',
        );
      });
    });
  },
);
