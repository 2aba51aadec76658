import { FINAL_STATUSES, RUN_STATUSES, type RunStatus } from '@cairn/engine';
import { requiresChromium } from '@cairn/services';
import pg from 'pg';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESEARCHER } from '../fleet/fleet.js';
import { launchChromium, screenshotPath } from './chromium.js';
import { startUiStack, type UiStack } from './ui-stack.js';

// The fleet overview above the run list, read in Chromium against what the database holds, each
// figure computed here from the tables (runs, run_attempts) by the test's own arithmetic.

const ADMIN_KEY = 'overview-admin-key';
const ACME_KEY = 'overview-acme-key';

interface StoredRun {
  run_id: string;
  tenant_id: string | null;
  status: RunStatus;
  created_at: Date;
  updated_at: Date;
  /** Creation to last update, to the microsecond as Postgres has it. */
  duration_ms: number;
}

interface Minute {
  at: string;
  created: number;
  completed: number;
  error: number;
  recovered: number;
}

/** What the page should show, from the tables as they are, for the page's hour (its first minute `since`). */
async function expectedOverview(pool: pg.Pool, since: number, tenant?: string) {
  const { rows: stored } = await pool.query<StoredRun & { now: Date }>(
    `select run_id, tenant_id, status, created_at, updated_at, now() as now,
            extract(epoch from (updated_at - created_at))::float8 * 1000 as duration_ms
       from runs where parent_run_id is null`,
  );
  const { rows: recoveries } = await pool.query<{ run_id: string; started_at: Date }>(
    `select run_id, started_at from run_attempts where reason = 'recovered'`,
  );
  const runs = stored.filter((r) => tenant === undefined || r.tenant_id === tenant);
  const ids = new Set(runs.map((r) => r.run_id));
  const now = stored[0]!.now.getTime();
  const minutes: Minute[] = Array.from({ length: 60 }, (_, i) => ({
    at: new Date(since + i * 60_000).toISOString(),
    created: 0,
    completed: 0,
    error: 0,
    recovered: 0,
  }));
  const bump = (at: Date, key: 'created' | 'completed' | 'error' | 'recovered') => {
    const i = Math.floor((at.getTime() - since) / 60_000);
    if (i >= 0 && i < 60) minutes[i]![key] += 1;
  };
  const durations: number[] = [];
  for (const run of runs) {
    bump(run.created_at, 'created');
    if (run.status === 'COMPLETED' || run.status === 'ERROR') {
      bump(run.updated_at, run.status === 'COMPLETED' ? 'completed' : 'error');
      if (run.updated_at.getTime() >= since) durations.push(run.duration_ms);
    }
  }
  for (const attempt of recoveries)
    if (ids.has(attempt.run_id)) bump(attempt.started_at, 'recovered');
  const byStatus = Object.fromEntries(RUN_STATUSES.map((s) => [s, 0])) as Record<RunStatus, number>;
  for (const run of runs) {
    const finished = FINAL_STATUSES.includes(run.status);
    if (!finished || run.updated_at.getTime() >= now - 24 * 3600_000) byStatus[run.status] += 1;
  }
  return { minutes, byStatus, p50: percentile(durations, 0.5), p95: percentile(durations, 0.95) };
}

/** Postgres's percentile_cont: linear between the two nearest ranks. */
function percentile(values: number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = p * (sorted.length - 1);
  const low = Math.floor(rank);
  const high = Math.ceil(rank);
  return sorted[low]! + (sorted[high]! - sorted[low]!) * (rank - low);
}

const seconds = (ms: number | null) =>
  ms === null ? '—' : `${(Math.round(ms) / 1000).toFixed(2)} s`;

describe('fleet overview in a browser', requiresChromium(), () => {
  let stack: UiStack;
  let pool: pg.Pool;
  let browser: Browser;
  const contexts: BrowserContext[] = [];

  async function pageAs(key: string, options: { javaScriptEnabled?: boolean } = {}): Promise<Page> {
    const context = await browser.newContext({
      viewport: { width: 1280, height: 900 },
      extraHTTPHeaders: { Authorization: `Bearer ${key}` },
      ...options,
    });
    contexts.push(context);
    return context.newPage();
  }

  /** The series the page renders for its chart (the numbers the script draws). */
  async function pageSeries(page: Page): Promise<Minute[]> {
    const raw = await page.getAttribute('#overview-chart', 'data-series');
    return (JSON.parse(raw!) as { minutes: Minute[] }).minutes;
  }

  const figure = async (page: Page, name: string) =>
    (await page.textContent(`#fleet-overview [data-overview="${name}"]`))!.trim();

  /** Creates a top-level run of `tenant`, claims it as a worker would, and finishes it unless RUNNING is asked. */
  async function storeRun(
    tenantId: string,
    status: 'COMPLETED' | 'ERROR' | 'RUNNING' | 'PENDING',
    input: string,
  ): Promise<string> {
    const { store } = stack.fleet;
    const { engine } = stack.fleet.client;
    const run = await engine.createRun({
      entity: RESEARCHER,
      input,
      tenantId,
      checkpoint: 'tool-batch',
    });
    if (status === 'PENDING') return run.runId;
    const { epoch } = await store.claimRun(run.runId, { workerId: 'worker-a', reason: 'run' });
    if (status === 'RUNNING') return run.runId;
    await store.finishRun(run.runId, epoch, {
      status,
      content: status === 'COMPLETED' ? 'done' : null,
      error:
        status === 'ERROR'
          ? { name: 'ModelError', message: 'model unavailable', retryable: true }
          : null,
      delta: {
        messages: [{ role: 'user', content: input }],
        toolCalls: [],
        usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
      },
    });
    return run.runId;
  }

  /** Moves a run's times `minutes` back (its creation, its last update, its attempts' starts). */
  async function backdate(runId: string, minutes: number, ranForMinutes = 0): Promise<void> {
    await pool.query(
      `update runs set created_at = now() - make_interval(mins => $2),
                       updated_at = now() - make_interval(mins => $2) + make_interval(mins => $3)
        where run_id = $1`,
      [runId, minutes, ranForMinutes],
    );
    await pool.query(
      `update run_attempts set started_at = now() - make_interval(mins => $2) + make_interval(mins => epoch - 1)
        where run_id = $1`,
      [runId, minutes],
    );
  }

  beforeAll(async () => {
    stack = await startUiStack({ apiKeys: [ADMIN_KEY, `acme:${ACME_KEY}`] });
    pool = new pg.Pool({ connectionString: stack.fleet.db.url, max: 2 });
    browser = await launchChromium();
    const { store } = stack.fleet;

    // acme: two ended now, one ended 25 minutes ago after 3, one finished two days ago (outside
    // the day and the hour), one queued, one RUNNING that a second worker took over after a crash.
    await storeRun('acme', 'COMPLETED', 'acme done now');
    await storeRun('acme', 'ERROR', 'acme failed now');
    await backdate(await storeRun('acme', 'COMPLETED', 'acme done earlier'), 28, 3);
    await backdate(await storeRun('acme', 'COMPLETED', 'acme done two days ago'), 2 * 24 * 60, 1);
    await storeRun('acme', 'PENDING', 'acme queued');
    const recovered = await storeRun('acme', 'RUNNING', 'acme recovered');
    await store.claimRun(recovered, { workerId: 'worker-b', reason: 'recovered' });
    await backdate(recovered, 12);
    // globex: one ended 40 minutes ago with an error, one recovered now and parked for capacity.
    await backdate(await storeRun('globex', 'ERROR', 'globex failed earlier'), 40, 1);
    const parked = await storeRun('globex', 'RUNNING', 'globex parked');
    await store.claimRun(parked, { workerId: 'worker-b', reason: 'recovered' });
    await pool.query(
      `update runs set waiting = jsonb_build_object('for', 'capacity', 'model', 'openai-chat:gpt-x',
                                                   'until', now() + interval '1 minute')
        where run_id = $1`,
      [parked],
    );
    // Today's spend as the commits of priced turns count it (the ledgers' writer is tested on the store).
    await pool.query(
      `insert into tenant_day_spend (tenant_id, day, cost_micro_usd)
       values ('acme', (now() at time zone 'utc')::date, 1500000)`,
    );
    await pool.query(
      `insert into tenant_model_day_spend (day, tenant_id, model, cost_micro_usd)
       values ((now() at time zone 'utc')::date, 'acme', 'openai:gpt-a', 1000000),
              ((now() at time zone 'utc')::date, 'acme', 'openai:gpt-b', 500000)`,
    );
  });
  afterAll(async () => {
    for (const context of contexts) await context.close();
    await browser?.close();
    await pool?.end();
    await stack?.stop();
  });

  it("shows every run's counts and the last hour per minute as the tables hold them, and draws the hour with uPlot", async () => {
    const page = await pageAs(ADMIN_KEY);
    // What the page's policy refused, and any of the page's own files missing.
    const refused: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error' && message.text().includes('Content Security Policy'))
        refused.push(message.text());
    });
    page.on('response', (response) => {
      if (response.status() >= 400 && !response.url().endsWith('/favicon.ico'))
        refused.push(`${response.status()} ${response.url()}`);
    });
    await page.goto(`${stack.baseUrl}/ui`);

    const series = await pageSeries(page);
    expect(series).toHaveLength(60);
    const expected = await expectedOverview(pool, Date.parse(series[0]!.at));
    expect(series).toEqual(expected.minutes);
    for (const status of RUN_STATUSES)
      expect(Number(await figure(page, `status-${status}`)), status).toBe(
        expected.byStatus[status],
      );
    // Not a count of all time: of the three COMPLETED runs stored, the one that ended two days ago
    // is not among the last 24 hours'.
    expect(Number(await figure(page, 'status-COMPLETED'))).toBe(2);
    const total = (key: keyof Omit<Minute, 'at'>) =>
      expected.minutes.reduce((sum, m) => sum + m[key], 0);
    expect(Number(await figure(page, 'created'))).toBe(total('created'));
    expect(Number(await figure(page, 'completed'))).toBe(total('completed'));
    expect(Number(await figure(page, 'error'))).toBe(total('error'));
    expect(Number(await figure(page, 'recovered'))).toBe(total('recovered'));
    expect(total('recovered')).toBe(2);
    expect(await figure(page, 'p50')).toBe(seconds(expected.p50));
    expect(await figure(page, 'p95')).toBe(seconds(expected.p95));
    expect(
      await page.textContent('#fleet-overview [data-waiting-model="openai-chat:gpt-x"]'),
    ).toMatch(/openai-chat:gpt-x:\s*1\s*run/);

    // The chart: uPlot's canvas, drawn from the series; its table folded away once drawn.
    await page.waitForSelector('#overview-chart[data-drawn="1"] canvas');
    expect(await page.locator('#overview-chart .u-legend').textContent()).toContain('recovered');
    expect(await page.getAttribute('#overview-minutes', 'open')).toBeNull();
    expect(refused).toEqual([]);
    await page.screenshot({ path: screenshotPath('fleet-overview.png'), fullPage: true });
  });

  it('shows the numbers without JavaScript: the minutes with any as a table', async () => {
    const page = await pageAs(ADMIN_KEY, { javaScriptEnabled: false });
    await page.goto(`${stack.baseUrl}/ui`);
    const series = await pageSeries(page);
    const expected = await expectedOverview(pool, Date.parse(series[0]!.at));
    const busy = expected.minutes.filter(
      (m) => m.created + m.completed + m.error + m.recovered > 0,
    );
    expect(await page.locator('#overview-chart canvas').count()).toBe(0);
    expect(await page.getAttribute('#overview-minutes', 'open')).not.toBeNull();
    const rows = page.locator('#overview-minutes tbody tr');
    expect(await rows.count()).toBe(busy.length);
    for (const [i, minute] of busy.entries()) {
      const row = rows.nth(i);
      expect(await row.getAttribute('data-minute')).toBe(minute.at);
      expect(await row.locator('time').textContent()).toBe(minute.at.slice(11, 16));
      for (const key of ['created', 'completed', 'error', 'recovered'] as const)
        expect(Number(await row.locator(`[data-kind="${key}"]`).textContent()), key).toBe(
          minute[key],
        );
    }
    expect(await page.isVisible('#overview-minutes table')).toBe(true);
    await page.screenshot({ path: screenshotPath('fleet-overview-no-js.png'), fullPage: true });
  });

  describe("the overview's links (each followed from a fresh overview, a few per test)", () => {
    let page: Page;
    beforeAll(async () => {
      page = await pageAs(ADMIN_KEY);
    });

    /** The run ids of the list's rows (one page: fewer than 50 here). */
    const listed = () =>
      page
        .locator('#run-table tbody tr')
        .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-run-id')));

    /** Clicks `selector` on a fresh overview; the hour's first minute, its text (the count), the list's runs and its URL. */
    const follow = async (selector: string) => {
      await page.goto(`${stack.baseUrl}/ui`);
      const since = Date.parse((await pageSeries(page))[0]!.at);
      // The minutes' table folds away once the chart is drawn.
      await page.$eval('#overview-minutes', (details) => details.setAttribute('open', ''));
      const link = page.locator(selector).first();
      const text = (await link.textContent())!.trim();
      await Promise.all([page.waitForURL((url) => url.search !== ''), link.click()]);
      return { since, text, runs: await listed(), url: new URL(page.url()) };
    };
    /** Follows the overview's count `name`; the count it showed, the list's runs and its URL. */
    const followCount = async (name: string) => {
      const { text, runs, url } = await follow(`#fleet-overview [data-overview="${name}"]`);
      return { count: Number(text), runs, url };
    };

    /** Top-level runs in the list's order (most recently ended first) matching `where` (`$1`, `$2` the range). */
    const runsWhere = async (where: string, from: number, to: number) =>
      (
        await pool.query<{ run_id: string }>(
          `select run_id from runs where parent_run_id is null and ${where}
            order by updated_at desc, run_id desc`,
          [new Date(from), new Date(to)],
        )
      ).rows.map((r) => r.run_id);
    const farFuture = () => Date.now() + 24 * 3600_000;
    const endedIn = (status: string) =>
      `status = '${status}' and updated_at >= $1 and updated_at < $2`;
    const recoveredIn = `exists (select 1 from run_attempts a where a.run_id = runs.run_id
      and a.reason = 'recovered' and a.started_at >= $1 and a.started_at < $2)`;

    it('a status count opens the run list of that status, a final one its last 24 hours first', async () => {
      const errors = await followCount('status-ERROR');
      expect(errors.url.searchParams.get('status')).toBe('ERROR');
      expect(errors.runs.length).toBe(errors.count);
      for (const status of await page.locator('#run-table tbody tr td .status').allTextContents())
        expect(status).toBe('ERROR');

      // A final status's count is the last 24 hours'; its link lists them first, most recently ended
      // first, and older ones after them.
      const completed = await followCount('status-COMPLETED');
      expect(completed.url.searchParams.get('sort')).toBe('updated');
      const { rows: byEnd } = await pool.query<{ run_id: string; recent: boolean }>(
        `select run_id, updated_at >= now() - interval '24 hours' as recent from runs
          where status = 'COMPLETED' and parent_run_id is null order by updated_at desc, run_id desc`,
      );
      expect(completed.runs).toEqual(byEnd.map((r) => r.run_id));
      expect(byEnd.map((r) => r.recent)).toEqual([
        ...Array<boolean>(completed.count).fill(true),
        false,
      ]);

      const running = await followCount('status-RUNNING');
      expect(running.runs.length).toBe(running.count);
    });

    it("the hour's creations, a model's parked runs and the pending actions open the runs they count", async () => {
      // The hour's creations: the runs created since the hour's first minute.
      const created = await followCount('created');
      expect(created.url.searchParams.get('created_from')).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d$/);
      expect(created.runs.length).toBe(created.count);

      const parked = await followCount('waiting-openai-chat:gpt-x');
      expect(parked.url.searchParams.get('waiting')).toBe('capacity');
      const { rows: parkedRuns } = await pool.query<{ run_id: string }>(
        `select run_id from runs where waiting is not null and parent_run_id is null`,
      );
      expect(parked.runs).toEqual(parkedRuns.map((r) => r.run_id));

      expect((await followCount('pending-actions')).url.searchParams.get('waiting')).toBe('person');
    });

    it("a minute's creations and a tenant's spend open the runs they count", async () => {
      // A minute's creations, from the table.
      await page.goto(`${stack.baseUrl}/ui`);
      const minuteLink = page.locator('#overview-minutes [data-kind="created"] a').first();
      await page.click('#overview-minutes summary');
      const inMinute = Number(await minuteLink.textContent());
      await Promise.all([page.waitForURL(/created_to=/), minuteLink.click()]);
      expect((await listed()).length).toBe(inMinute);

      // A tenant's spend, by model, opens its runs.
      await page.goto(`${stack.baseUrl}/ui`);
      const spend = page.locator('#fleet-overview [data-spend-tenant="acme"]');
      expect(await spend.textContent()).toContain('$1.50');
      expect(await spend.locator('[data-spend-model="openai:gpt-a"]').textContent()).toContain(
        '$1.00',
      );
      expect(await spend.locator('[data-spend-model="openai:gpt-b"]').textContent()).toContain(
        '$0.50',
      );
      await Promise.all([page.waitForURL(/tenant=acme/), spend.locator('a').first().click()]);
      const { rows: acmeRuns } = await pool.query<{ n: number }>(
        `select count(*)::int as n from runs where tenant_id = 'acme' and parent_run_id is null`,
      );
      expect((await listed()).length).toBe(acmeRuns[0]!.n);
    });

    for (const [name, status] of [
      ['completed', 'COMPLETED'],
      ['error', 'ERROR'],
    ] as const)
      it(`the hour's ${name} count opens the runs that ended ${status} in it, and so does each minute's`, async () => {
        const hour = await follow(`#fleet-overview [data-overview="${name}"]`);
        expect(hour.url.searchParams.get('ended_from')).toBe(
          new Date(hour.since).toISOString().slice(0, 16),
        );
        expect(hour.url.searchParams.get('status')).toBe(status);
        const expected = await runsWhere(endedIn(status), hour.since, farFuture());
        expect(hour.runs, name).toEqual(expected);
        expect(hour.runs.length, name).toBe(Number(hour.text));
        expect(hour.runs.length, name).toBeGreaterThan(0);

        // Each minute's cell with any: the runs that ended in that status in that minute.
        await page.goto(`${stack.baseUrl}/ui`);
        const minutes = await page
          .locator(`#overview-minutes tr:has([data-kind="${name}"] a)`)
          .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-minute')!));
        expect(minutes.length, name).toBeGreaterThan(0);
        for (const minute of minutes) {
          const cell = await follow(
            `#overview-minutes tr[data-minute="${minute}"] [data-kind="${name}"] a`,
          );
          const at = Date.parse(minute);
          expect(cell.runs, `${name} at ${minute}`).toEqual(
            await runsWhere(endedIn(status), at, at + 60_000),
          );
          expect(cell.runs.length).toBe(Number(cell.text));
        }
      });

    it("the hour's recoveries open the runs taken over in it, and so does each minute's", async () => {
      // Recoveries: the runs taken over in the hour (one attempt each here, so as many as counted).
      const recovered = await follow('#fleet-overview [data-overview="recovered"]');
      expect(recovered.url.searchParams.get('recovered')).toBe('1');
      expect([...recovered.runs].sort()).toEqual(
        [...(await runsWhere(recoveredIn, recovered.since, farFuture()))].sort(),
      );
      expect(recovered.runs.length).toBe(Number(recovered.text));
      expect(recovered.runs.length).toBe(2);
      await page.goto(`${stack.baseUrl}/ui`);
      const recoveryMinutes = await page
        .locator('#overview-minutes tr:has([data-kind="recovered"] a)')
        .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-minute')!));
      expect(recoveryMinutes.length).toBe(2);
      for (const minute of recoveryMinutes) {
        const cell = await follow(
          `#overview-minutes tr[data-minute="${minute}"] [data-kind="recovered"] a`,
        );
        const at = Date.parse(minute);
        expect(cell.runs).toEqual(await runsWhere(recoveredIn, at, at + 60_000));
        expect(cell.runs.length).toBe(Number(cell.text));
      }
    });

    it("the hour's p50 and p95 open every run ended in it, whatever its status; a model's spend opens its tenant's runs", async () => {
      // The durations: every run that ended in the hour, whatever its final status.
      for (const name of ['p50', 'p95']) {
        const duration = await follow(`#fleet-overview [data-overview="${name}"]`);
        expect(duration.url.searchParams.get('status')).toBeNull();
        expect(duration.runs, name).toEqual(
          await runsWhere(
            `status in ('COMPLETED', 'ERROR', 'CANCELLED') and updated_at >= $1 and updated_at < $2`,
            duration.since,
            farFuture(),
          ),
        );
        expect(duration.runs.length).toBe(4);
      }

      // A model's spend opens its tenant's runs.
      await page.goto(`${stack.baseUrl}/ui`);
      await Promise.all([
        page.waitForURL(/tenant=acme/),
        page.click('#fleet-overview [data-spend-model="openai:gpt-b"] a'),
      ]);
      const { rows: acmeRuns } = await pool.query<{ run_id: string }>(
        `select run_id from runs where tenant_id = 'acme' and parent_run_id is null
          order by created_at desc, run_id desc`,
      );
      expect(await listed()).toEqual(acmeRuns.map((r) => r.run_id));
    });
  });

  it('refuses a bad or reversed ended range and a bad recovered flag, naming the field', async () => {
    for (const [query, field] of [
      ['ended_from=yesterday', 'ended_from'],
      ['ended_from=2026-12-02T10:00&ended_to=2026-12-02T09:00', 'ended_to'],
      ['recovered_to=2026-02-30T10:00', 'recovered_to'],
      ['recovered=yes', 'recovered'],
    ] as const) {
      const response = await fetch(`${stack.baseUrl}/ui?${query}`, {
        headers: { authorization: `Bearer ${ADMIN_KEY}` },
      });
      expect(response.status, query).toBe(400);
      expect(await response.text(), query).toContain(field);
    }
  });

  it("shows a tenant's key its tenant's figures only", async () => {
    const page = await pageAs(ACME_KEY);
    await page.goto(`${stack.baseUrl}/ui`);
    const series = await pageSeries(page);
    const expected = await expectedOverview(pool, Date.parse(series[0]!.at), 'acme');
    expect(series).toEqual(expected.minutes);
    for (const status of RUN_STATUSES)
      expect(Number(await figure(page, `status-${status}`)), status).toBe(
        expected.byStatus[status],
      );
    // globex's ERROR, recovery and parked run are not acme's.
    expect(Number(await figure(page, 'error'))).toBe(1);
    expect(Number(await figure(page, 'recovered'))).toBe(1);
    expect(await page.locator('#fleet-overview [data-waiting-model]').count()).toBe(0);
    await page.waitForSelector('#overview-chart[data-drawn="1"] canvas');
  });

  it('serves uPlot from the producer, its versioned file cached for a year', async () => {
    const page = await pageAs(ADMIN_KEY);
    await page.goto(`${stack.baseUrl}/ui`);
    const src = await page.getAttribute('script[src*="uplot-"]', 'src');
    expect(src).toMatch(/^\/ui\/assets\/uplot-1\.6\.\d+\.iife\.min\.js$/);
    const res = await fetch(`${stack.baseUrl}${src}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/javascript');
    expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(await res.text()).toContain('uPlot');
  });
});
