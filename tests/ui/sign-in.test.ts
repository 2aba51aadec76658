import { requiresChromium } from '@cairn/services';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEAM } from '../fleet/fleet.js';
import { launchChromium } from './chromium.js';
import { startUiStack, type UiStack } from './ui-stack.js';

const FULL_KEY = 'ui-full-key-0123456789';
const READ_KEY = 'ui-read-key-0123456789';

/** A status and JSON body of a request the page itself makes (same origin, its cookies). */
interface PageAnswer {
  status: number;
  body: { error?: string } | null;
}

/** Writes from inside the page, with `headers`, as a script on the page (or a forged form) would. */
function writeFromPage(
  page: Page,
  path: string,
  headers: Record<string, string>,
  method = 'POST',
): Promise<PageAnswer> {
  return page.evaluate(
    async ([m, p, h]) => {
      const res = await fetch(p, {
        method: m,
        headers: { 'Content-Type': 'application/json', ...h },
        body: '{}',
      });
      return {
        status: res.status,
        body: (await res.json().catch(() => null)) as { error?: string } | null,
      };
    },
    [method, path, headers] as const,
  );
}

describe('browser sign-in with API keys', requiresChromium(), () => {
  let stack: UiStack;
  let browser: Browser;
  let context: BrowserContext;

  beforeAll(async () => {
    stack = await startUiStack({ apiKeys: [FULL_KEY], readApiKeys: [READ_KEY] });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
  });

  async function signIn(key: string, next = '/ui'): Promise<Page> {
    context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${stack.baseUrl}${next}`);
    await page.waitForURL(/\/ui\/login/);
    await page.fill('input[name=key]', key);
    await page.click('#login-form button[type=submit]');
    return page;
  }

  it('sends a browser without a session to sign-in, refuses a wrong key, and signs in and out with a right one', async () => {
    const { runId } = await stack.fleet.client.enqueueRun({
      entity: TEAM,
      input: 'Research sign-in',
    });
    const page = await signIn('not-a-key', `/ui/runs/${runId}`);
    expect(await page.textContent('#login-notice')).toContain('not valid');
    expect((await context.cookies()).map((c) => c.name)).not.toContain('cairn_session');

    await page.fill('input[name=key]', FULL_KEY);
    await page.click('#login-form button[type=submit]');
    await page.waitForURL(`${stack.baseUrl}/ui/runs/${runId}`);
    expect(await page.getAttribute('#run', 'data-run-id')).toBe(runId);

    const session = (await context.cookies()).find((c) => c.name === 'cairn_session')!;
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/' });
    expect(session.value).not.toContain(FULL_KEY);
    expect(await page.evaluate('document.cookie')).not.toContain('cairn_session');

    // The same session opens Bull Board.
    await page.goto(`${stack.baseUrl}/admin/queues`);
    await page.waitForSelector('text=' + stack.fleet.client.runQueue.queue.name, {
      timeout: 30_000,
    });

    await page.goto(`${stack.baseUrl}/ui`);
    await page.click('#sign-out');
    await page.waitForURL(/\/ui\/login\?signed_out=1/);
    expect(await page.textContent('#login-notice')).toContain('signed out');
    expect((await context.cookies()).map((c) => c.name)).not.toContain('cairn_session');
    await page.goto(`${stack.baseUrl}/ui`);
    expect(page.url()).toContain('/ui/login?next=%2Fui');
    const api = await page.evaluate(async () => (await fetch('/v1/runs/x')).status);
    expect(api).toBe(401);
    await context.close();

    // A copy of the signed-out cookie (another tab, a stolen one) opens nothing either.
    const copied = await browser.newContext();
    await copied.addCookies([{ ...session, sameSite: 'Strict' }]);
    const again = await copied.newPage();
    await again.goto(`${stack.baseUrl}/ui/runs/${runId}`);
    expect(again.url()).toContain('/ui/login?next=');
    expect(await again.evaluate(async () => (await fetch('/v1/runs/x')).status)).toBe(401);
    await copied.close();
  });

  it('acts from a page with the CSRF token, and refuses a write without it (403, nothing changes)', async () => {
    const { client } = stack.fleet;
    const { runId } = await client.enqueueRun({ entity: TEAM, input: 'Research CSRF' });
    const page = await signIn(FULL_KEY, `/ui/runs/${runId}`);
    await page.waitForSelector('#run');

    for (const headers of [{}, { 'X-CSRF-Token': 'forged' }] as Record<string, string>[]) {
      const answer = await writeFromPage(page, `/v1/runs/${runId}/cancel`, headers);
      expect(answer).toEqual({
        status: 403,
        body: expect.objectContaining({ error: 'forbidden' }),
      });
    }
    const queue = client.runQueue.queue;
    const pausePath = `/admin/queues/api/queues/${encodeURIComponent(queue.name)}/pause`;
    expect((await writeFromPage(page, pausePath, {}, 'PUT')).status).toBe(403);
    expect(await client.getRunStatus(runId)).toBe('PENDING');
    expect(await queue.isPaused()).toBe(false);

    // Bull Board's own client sends the readable XSRF-TOKEN cookie back as X-XSRF-TOKEN: its actions work.
    const xsrf = (await context.cookies()).find((c) => c.name === 'XSRF-TOKEN')!.value;
    expect((await writeFromPage(page, pausePath, { 'X-XSRF-TOKEN': xsrf }, 'PUT')).status).toBe(
      200,
    );
    expect(await queue.isPaused()).toBe(true);
    await queue.resume();

    await page.click('button[data-command="cancel"]');
    await page.waitForSelector('#run[data-status="CANCELLED"]');
    expect(await client.getRunStatus(runId)).toBe('CANCELLED');
    await context.close();
  });

  it('lets a read-only key look but not act: buttons disabled, a write with a valid CSRF token still 403', async () => {
    const { client } = stack.fleet;
    const { runId } = await client.enqueueRun({ entity: TEAM, input: 'Research read-only' });
    const page = await signIn(READ_KEY, `/ui/runs/${runId}`);
    await page.waitForSelector('#run');
    expect(await page.textContent('header.top .read-only')).toBe('read-only');
    for (const command of ['cancel', 'continue', 'fork']) {
      expect(await page.isDisabled(`button[data-command="${command}"]`), command).toBe(true);
    }
    const token = (await page.getAttribute('meta[name="csrf-token"]', 'content'))!;
    expect(token.length).toBeGreaterThan(20);
    const answer = await writeFromPage(page, `/v1/runs/${runId}/cancel`, { 'X-CSRF-Token': token });
    expect(answer).toEqual({ status: 403, body: expect.objectContaining({ error: 'forbidden' }) });
    expect(await client.getRunStatus(runId)).toBe('PENDING');

    // It can still sign out, and the signed-out cookie opens nothing, copied or not.
    const session = (await context.cookies()).find((c) => c.name === 'cairn_session')!;
    await page.click('#sign-out');
    await page.waitForURL(/\/ui\/login\?signed_out=1/);
    expect(await page.textContent('#login-notice')).toContain('signed out');
    expect((await context.cookies()).map((c) => c.name)).not.toContain('cairn_session');
    await context.close();
    const copied = await browser.newContext();
    await copied.addCookies([{ ...session, sameSite: 'Strict' }]);
    const again = await copied.newPage();
    await again.goto(`${stack.baseUrl}/ui/runs/${runId}`);
    expect(again.url()).toContain('/ui/login?next=');
    expect(await again.evaluate(async (id) => (await fetch(`/v1/runs/${id}`)).status, runId)).toBe(
      401,
    );
    await copied.close();
  });
});
