import { requiresChromium } from '@cairn/services';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESEARCHER } from '../fleet/fleet.js';
import { launchChromium, screenshotPath } from './chromium.js';
import { startUiStack, type UiStack } from './ui-stack.js';

const ACME_KEY = 'acme-list-key-0123456789';
const GLOBEX_KEY = 'globex-list-key-0123456789';
const ADMIN_KEY = 'admin-list-key-0123456789';
const READ_KEY = 'read-list-key-0123456789';

function rowIds(page: Page): Promise<(string | null)[]> {
  return page
    .locator('#run-table tbody tr')
    .evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-run-id')));
}

describe(
  'the run list with tenant keys: the tenant filter and bulk cancel stay within a tenant',
  requiresChromium(),
  () => {
    let stack: UiStack;
    let browser: Browser;
    const contexts: BrowserContext[] = [];

    beforeAll(async () => {
      stack = await startUiStack({
        apiKeys: [`acme:${ACME_KEY}`, `globex:${GLOBEX_KEY}`, ADMIN_KEY],
        readApiKeys: [READ_KEY],
      });
      browser = await launchChromium();
    });
    afterAll(async () => {
      for (const context of contexts) await context.close();
      await browser?.close();
      await stack?.stop();
    });

    async function signIn(key: string): Promise<Page> {
      const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
      contexts.push(context);
      const page = await context.newPage();
      await page.goto(`${stack.baseUrl}/ui/login`);
      await page.fill('input[name=key]', key);
      await page.click('#login-form button[type=submit]');
      await page.waitForURL((url) => url.pathname === '/ui');
      return page;
    }

    it("lets only an admin filter by tenant, and a tenant's bulk cancel cannot reach another tenant's run, even by a forged id", async () => {
      const { client } = stack.fleet;
      const acmeOne = await client.enqueueRun({
        entity: RESEARCHER,
        input: 'acme one',
        tenantId: 'acme',
      });
      const acmeTwo = await client.enqueueRun({
        entity: RESEARCHER,
        input: 'acme two',
        tenantId: 'acme',
      });
      const globex = await client.enqueueRun({
        entity: RESEARCHER,
        input: 'globex one',
        tenantId: 'globex',
      });

      // An admin picks a tenant.
      const admin = await signIn(ADMIN_KEY);
      expect(await rowIds(admin)).toEqual([globex.runId, acmeTwo.runId, acmeOne.runId]);
      await admin.fill('#run-filters [name="tenant"]', 'globex');
      await admin.click('#run-filters button[type=submit]');
      await admin.waitForURL((url) => url.searchParams.get('tenant') === 'globex');
      expect(await rowIds(admin)).toEqual([globex.runId]);

      // A tenant key has no tenant field, sees its own runs, and asking for another tenant's is refused in words.
      const acme = await signIn(ACME_KEY);
      expect(await acme.locator('#run-filters [name="tenant"]').count()).toBe(0);
      expect(await rowIds(acme)).toEqual([acmeTwo.runId, acmeOne.runId]);
      const refused = await acme.goto(`${stack.baseUrl}/ui?tenant=globex`);
      expect(refused?.status()).toBe(403);
      expect(await acme.textContent('body')).toContain(
        "tenant: only an admin key may filter by tenant; this key sees tenant acme's runs only",
      );
      // Naming its own tenant is the same list.
      const own = await acme.goto(`${stack.baseUrl}/ui?tenant=acme`);
      expect(own?.status()).toBe(200);
      expect(await rowIds(acme)).toEqual([acmeTwo.runId, acmeOne.runId]);

      // Forging: globex's run id added to acme's selection, as an edited page would post it.
      await acme.goto(`${stack.baseUrl}/ui`);
      await acme.check(`tr[data-run-id="${acmeOne.runId}"] input[name="run_id"]`);
      await acme
        .locator('#run-table tbody tr:last-child td')
        .first()
        .evaluate((cell, forged) => {
          cell.insertAdjacentHTML(
            'beforeend',
            `<input type="checkbox" name="run_id" value="${forged}" form="bulk-cancel" checked />`,
          );
        }, globex.runId);
      acme.once('dialog', (dialog) => void dialog.accept());
      await acme.click('#cancel-selected');
      await acme.waitForSelector('#bulk-cancel-result');
      expect(
        await acme
          .locator('#bulk-cancel-result tbody tr')
          .evaluateAll((trs) =>
            trs.map((tr) => [tr.getAttribute('data-run-id'), tr.getAttribute('data-outcome')]),
          ),
      ).toEqual([
        [acmeOne.runId, 'cancelled'],
        [globex.runId, 'not-found'],
      ]);
      await acme.screenshot({
        path: screenshotPath('run-list-bulk-cancel-tenant.png'),
        fullPage: true,
      });
      expect(await client.getRunStatus(acmeOne.runId)).toBe('CANCELLED');
      expect(await client.getRunStatus(globex.runId)).toBe('PENDING');
      expect(await client.getRunStatus(acmeTwo.runId)).toBe('PENDING');

      // The confirmation page shows another tenant's id as no such run, nothing of it.
      const asked = await acme.request.post(`${stack.baseUrl}/ui/cancel-runs`, {
        form: {
          run_id: globex.runId,
          _csrf: (await acme.getAttribute('meta[name="csrf-token"]', 'content'))!,
        },
      });
      expect(asked.status()).toBe(200);
      const page = await asked.text();
      expect(page).toContain('no such run');
      expect(page).not.toContain('globex one');
      expect(await client.getRunStatus(globex.runId)).toBe('PENDING');
    });

    it('refuses a bulk cancel without the session CSRF token, and from a read-only key, cancelling nothing', async () => {
      const { client } = stack.fleet;
      const run = await client.enqueueRun({
        entity: RESEARCHER,
        input: 'acme keep',
        tenantId: 'acme',
      });
      const acme = await signIn(ACME_KEY);
      // A form another site would post: the session cookie goes along (were SameSite lax), the token does not.
      const forged = await acme.request.post(`${stack.baseUrl}/ui/cancel-runs`, {
        form: { run_id: run.runId, confirm: '1' },
      });
      expect(forged.status()).toBe(403);
      expect(await forged.text()).toContain('missing or invalid CSRF token');
      const wrongToken = await acme.request.post(`${stack.baseUrl}/ui/cancel-runs`, {
        form: { run_id: run.runId, confirm: '1', _csrf: 'not-the-token' },
      });
      expect(wrongToken.status()).toBe(403);
      expect(await client.getRunStatus(run.runId)).toBe('PENDING');

      // A read-only key sees no checkbox nor button, and its post is refused.
      const reader = await signIn(READ_KEY);
      await reader.goto(`${stack.baseUrl}/ui`);
      expect(await reader.locator('#bulk-cancel').count()).toBe(0);
      expect(await reader.locator('input[name="run_id"]').count()).toBe(0);
      const readOnly = await reader.request.post(`${stack.baseUrl}/ui/cancel-runs`, {
        form: {
          run_id: run.runId,
          confirm: '1',
          _csrf: (await reader.getAttribute('meta[name="csrf-token"]', 'content'))!,
        },
      });
      expect(readOnly.status()).toBe(403);
      expect(await client.getRunStatus(run.runId)).toBe('PENDING');
    });
  },
);
