import {
  Agent,
  Engine,
  OpenAIChatModel,
  parseModelPrices,
  Registry,
  Team,
  tool,
} from '@cairn/engine';
import { startFakeOpenAIServer, toolResults, type FakeOpenAIServer } from '@cairn/engine/testing';
import { requiresChromium } from '@cairn/services';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { launchChromium, screenshotPath } from './chromium.js';
import { startUiStack, type UiStack } from './ui-stack.js';

// A run's spend as its pages show it: usage and cost in the header, per attempt and in the list,
// and a run paused for real by its budget, whose budget a person raises from the page (signed in:
// the decision is a CSRF-protected write) before a worker's engine resumes it.

const FULL_KEY = 'spend-full-key-0123456789';

/** Text as a person reads it: runs of whitespace (the template's line breaks) as one space. */
const words = (text: string | null) => (text ?? '').replace(/\s+/g, ' ').trim();

const PRICES = parseModelPrices(
  { 'openai-chat:gpt-*': { input_per_mtok: 2, cached_input_per_mtok: 0.5, output_per_mtok: 8 } },
  'test',
);

describe('spend on the run pages (usage, cost, budget)', requiresChromium(), () => {
  let stack: UiStack;
  let browser: Browser;
  let page: Page;
  let server: FakeOpenAIServer;
  let worker: Engine;

  beforeAll(async () => {
    stack = await startUiStack({ apiKeys: [FULL_KEY] });
    // One ping, then an answer; a team delegates once, then answers.
    server = await startFakeOpenAIServer({
      decide: ({ messages, tools }) => {
        if (tools.some((t) => t.name === 'delegate_task_to_member'))
          return toolResults(messages).length === 0
            ? {
                toolCalls: [
                  {
                    name: 'delegate_task_to_member',
                    arguments: { member: 'worker', task: 'ping once' },
                  },
                ],
              }
            : { text: 'crew done' };
        return toolResults(messages).length === 0
          ? { toolCalls: [{ name: 'ping', arguments: {} }] }
          : { text: 'pinged once' };
      },
    });
    const ping = tool({
      name: 'ping',
      description: 'Answers pong',
      parameters: z.object({}),
      execute: () => 'pong',
    });
    const model = (id: string) =>
      new OpenAIChatModel({ model: id, apiKey: 'k', baseURL: server.url });
    const pinger = (name: string) => new Agent({ name, model: model('gpt-b'), tools: [ping] });
    const crew = new Team({ name: 'crew', model: model('gpt-lead'), members: [pinger('worker')] });
    // A worker's engine on the stack's store, with prices.
    worker = new Engine({
      store: stack.fleet.store,
      registry: new Registry({ agents: [pinger('pinger')], teams: [crew] }),
      workerId: 'test-worker',
      prices: PRICES,
    });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
    await page.goto(`${stack.baseUrl}/ui`);
    await page.waitForURL(/\/ui\/login/);
    await page.fill('input[name=key]', FULL_KEY);
    await page.click('#login-form button[type=submit]');
    await page.waitForURL(`${stack.baseUrl}/ui`);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await stack?.stop();
  });

  it('a run paused by its budget shows what it spent and the budget; a raise out of range is refused naming the field, a raise from the page resumes it; header, attempts and list show its usage and cost', async () => {
    const { client } = stack.fleet;
    const run = await worker.createRun({
      entity: { kind: 'agent', name: 'pinger' },
      input: 'ping once',
      budget: { maxTokens: 1 },
    });
    expect(
      await worker.processPickup({ job: 'run', runId: run.runId, attemptsStarted: 1 }),
    ).toEqual({ kind: 'finished', status: 'PAUSED' });
    // The budget is checked before the first request: nothing was asked of the model.
    expect(server.requests).toHaveLength(0);

    await page.goto(`${stack.baseUrl}/ui/runs/${run.runId}`);
    expect(await page.getAttribute('#run', 'data-status')).toBe('PAUSED');
    const action = page.locator('li.action[data-action-kind="budget"]');
    expect(await action.count()).toBe(1);
    expect(words(await action.locator('.budget-spent').textContent())).toBe(
      'Spent 0 tokens and $0.00; budget 1 token. The next model request would pass it.',
    );
    expect(words(await page.textContent('.run-header [data-budget]'))).toBe(
      '0 / 1 tokens (spent / budget, members included)',
    );
    await page.screenshot({ path: screenshotPath('run-paused-for-budget.png'), fullPage: true });

    // A max cost below one micro-dollar is out of range: a 400 naming the field, shown, nothing recorded.
    // (A raise in range but not above what was spent, a 422, is the budget fleet test's.)
    // A field a person has chosen but not typed in yet keeps the focus across a re-render,
    // so keys typed just after it land there (the page re-renders a live run every 2 s).
    await action.locator('input.budget-max-cost').focus();
    await page.evaluate("document.querySelector('ul.actions').setAttribute('data-stale', '1')");
    await page.waitForSelector('ul.actions:not([data-stale])');
    expect(await page.evaluate('document.activeElement?.className')).toBe('budget-max-cost');
    await action.locator('input.budget-max-cost').fill('0.0000001');
    await action.locator('button[data-command="raise-budget"]').click();
    await expect.poll(async () => words(await page.textContent('#flash'))).toContain('400');
    expect(words(await page.textContent('#flash'))).toContain('raise-budget refused: 400: ');
    expect(words(await page.textContent('#flash'))).toContain('budget.max_cost_usd');
    expect(words(await page.textContent('#flash'))).toContain('one micro-dollar');
    const [stillPending] = (await client.getRun(run.runId))!.pending_actions;
    expect(stillPending).toMatchObject({ kind: 'budget', status: 'pending' });

    await action.locator('input.budget-max-cost').fill('5');
    await action.locator('input.budget-max-tokens').fill('1000000');
    // The page re-renders a live run's changed sections every 2 s: what a person typed survives it.
    // Mark the section stale so that the next refresh re-renders it, and wait for that refresh.
    await page.evaluate("document.querySelector('ul.actions').setAttribute('data-stale', '1')");
    await page.waitForSelector('ul.actions:not([data-stale])');
    expect(await action.locator('input.budget-max-cost').inputValue()).toBe('5');
    expect(await action.locator('input.budget-max-tokens').inputValue()).toBe('1000000');
    await action.locator('button[data-command="raise-budget"]').click();
    await expect.poll(() => action.count()).toBe(0);
    expect(words(await page.textContent('#flash'))).toContain('raise-budget: status PAUSED');
    const decided = (await client.getRun(run.runId))!;
    expect(decided.budget).toEqual({
      max_tokens: 1_000_000,
      max_cost_usd: 5,
      decision_timeout_ms: null,
    });
    expect(decided.pending_actions).toEqual([]);

    // The decision enqueued the run's resume; a worker's pickup of it runs it to its end.
    expect(
      await worker.processPickup({
        job: 'continue',
        reason: 'continue',
        runId: run.runId,
        attemptsStarted: 1,
      }),
    ).toEqual({ kind: 'finished', status: 'COMPLETED' });
    await expect.poll(() => page.getAttribute('#run', 'data-status')).toBe('COMPLETED');
    const done = (await client.getRun(run.runId))!;
    const { usage } = done;
    expect(server.requests).toHaveLength(2);
    expect(usage.total_tokens).toBeGreaterThan(0);
    expect(usage.cost_usd).toBeGreaterThan(0);

    // The header: the run's usage and cost; no tree line (no members); spent / budget.
    const header = page.locator('.run-header');
    await expect
      .poll(() => header.locator('[data-usage="run"] .usage-note').getAttribute('data-tokens'))
      .toBe(String(usage.total_tokens));
    expect(
      Number(await header.locator('[data-usage="run"] .usage-note').getAttribute('data-cost-usd')),
    ).toBe(usage.cost_usd);
    const usageText = words(await header.locator('[data-usage="run"]').textContent());
    expect(usageText).toContain(`${usage.total_tokens.toLocaleString('en-US')} tokens`);
    expect(usageText).toContain(`${usage.output_tokens.toLocaleString('en-US')} out`);
    expect(usageText).toMatch(/ · \$0\.\d+$/);
    expect(await header.locator('[data-usage="tree"]').count()).toBe(0);
    expect(words(await header.locator('[data-budget]').textContent())).toContain(
      `${usage.total_tokens.toLocaleString('en-US')} / 1,000,000 tokens · $`,
    );
    expect(words(await header.locator('[data-budget]').textContent())).toContain(' / $5.00');

    // The attempts: the one that paused asked the model nothing; the resumed one made both turns.
    const lanes = page.locator('.timeline .lane');
    await expect.poll(() => lanes.count()).toBe(2);
    expect(await lanes.nth(0).locator('.lane-spend').count()).toBe(0);
    const spend = lanes.nth(1).locator('.lane-spend');
    expect(await spend.getAttribute('data-tokens')).toBe(String(usage.total_tokens));
    expect(Number(await spend.getAttribute('data-cost-usd'))).toBe(usage.cost_usd);
    expect(words(await spend.textContent())).toMatch(
      new RegExp(
        `^2 model turns: ${usage.total_tokens.toLocaleString('en-US')} tokens, \\$0\\.\\d+$`,
      ),
    );
    await page.screenshot({ path: screenshotPath('run-resumed-after-budget.png'), fullPage: true });

    // The list: a usage column with the run's tokens and cost.
    await page.goto(`${stack.baseUrl}/ui`);
    const cell = page.locator(`#run-table tr[data-run-id="${run.runId}"] td.usage`);
    expect(await cell.getAttribute('data-tokens')).toBe(String(usage.total_tokens));
    expect(Number(await cell.getAttribute('data-cost-usd'))).toBe(usage.cost_usd);
    expect(words(await cell.textContent())).toMatch(
      new RegExp(`^${usage.total_tokens.toLocaleString('en-US')} tokens · \\$0\\.\\d+$`),
    );
    expect(words(await page.textContent('#run-table thead'))).toContain('Usage');
    await page.screenshot({ path: screenshotPath('run-list-usage.png'), fullPage: true });
  });

  it("a team's page shows its own usage and, apart, its tree's with its member's", async () => {
    const { client } = stack.fleet;
    const run = await worker.createRun({ entity: { kind: 'team', name: 'crew' }, input: 'crew' });
    expect(
      await worker.processPickup({ job: 'run', runId: run.runId, attemptsStarted: 1 }),
    ).toEqual({ kind: 'finished', status: 'COMPLETED' });
    const view = (await client.getRun(run.runId))!;
    const member = view.member_runs[0]!;
    expect(view.usage_total.total_tokens).toBe(view.usage.total_tokens + member.usage.total_tokens);

    await page.goto(`${stack.baseUrl}/ui/runs/${run.runId}`);
    const header = page.locator('.run-header');
    expect(await header.locator('[data-usage="run"] .usage-note').getAttribute('data-tokens')).toBe(
      String(view.usage.total_tokens),
    );
    expect(
      await header.locator('[data-usage="tree"] .usage-note').getAttribute('data-tokens'),
    ).toBe(String(view.usage_total.total_tokens));
    expect(
      Number(await header.locator('[data-usage="tree"] .usage-note').getAttribute('data-cost-usd')),
    ).toBe(view.usage_total.cost_usd);
    expect(words(await header.textContent())).toContain(
      `Usage with members ${view.usage_total.total_tokens.toLocaleString('en-US')} tokens`,
    );
    // No budget set: no budget line.
    expect(await header.locator('[data-budget]').count()).toBe(0);

    // The member's own page: its usage is its tree's, shown once.
    await page.goto(`${stack.baseUrl}/ui/runs/${member.run_id}`);
    expect(
      await page.locator('.run-header [data-usage="run"] .usage-note').getAttribute('data-tokens'),
    ).toBe(String(member.usage.total_tokens));
    expect(await page.locator('.run-header [data-usage="tree"]').count()).toBe(0);
  });
});
