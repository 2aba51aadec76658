import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT, requiresChromium } from '@cairn/services';
import type { Browser } from 'playwright-core';
import { afterEach, describe, expect, it } from 'vitest';
import { RESEARCHER, startFleet, type Fleet } from '../fleet/fleet.js';
import { launchChromium } from '../ui/chromium.js';

const backend = process.env.CAIRN_TEST_REDIS_URL ? 'redis' : 'postgres';

/** What the page reports back from its run. */
interface PageRun {
  status: string;
  content: string | null;
  seqs: (number | undefined)[];
  types: string[];
  streamedText: string;
  missing: { name: string; status: number };
}

describe(`@cairn/client in a browser (${backend})`, requiresChromium(), () => {
  let fleet: Fleet | undefined;
  let browser: Browser | undefined;
  let built: string | undefined;
  afterEach(async () => {
    await browser?.close();
    await fleet?.stop();
    if (built) rmSync(built, { recursive: true, force: true });
  });

  it('runs in Chromium with fetch alone: creates a run, follows its events and text, waits for it, reads a typed error', async () => {
    // The client compiled for the browser: its own tsconfig has the DOM library and no Node types.
    built = mkdtempSync(join(tmpdir(), 'cairn-client-browser-'));
    const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
    execFileSync(
      process.execPath,
      [
        tsc,
        '-p',
        'packages/client/tsconfig.json',
        '--outDir',
        built,
        '--composite',
        'false',
        '--incremental',
        'false',
        '--declaration',
        'false',
        '--declarationMap',
        'false',
        '--sourceMap',
        'false',
      ],
      { cwd: REPO_ROOT },
    );

    fleet = await startFleet({ backend, toolDelayMs: 100 });
    await fleet.spawnWorker('a', { RESEARCH_MODEL_LATENCY_MS: '400' });
    const producer = await fleet.spawnProducer('producer');
    browser = await launchChromium();
    const page = await browser.newPage();
    // Served from the producer's origin, so the page's fetches are same-origin, as an app served beside it.
    await page.route(`${producer.baseUrl}/__client/**`, (route) =>
      route.fulfill({
        contentType: 'text/javascript',
        body: readFileSync(
          join(built!, new URL(route.request().url()).pathname.slice('/__client/'.length)),
        ),
      }),
    );
    // The app's own page (the producer's JSON answers forbid a page to load anything: CSP default-src 'none').
    await page.route(`${producer.baseUrl}/__app`, (route) =>
      route.fulfill({ contentType: 'text/html', body: '<!doctype html><title>app</title>' }),
    );
    await page.goto(`${producer.baseUrl}/__app`);
    // A page script, as text: the test runner must not rewrite its dynamic import.
    const script = `(async () => {
      const { createClient, RunNotFound } = await import('/__client/index.js');
      const cairn = createClient({ baseUrl: location.origin });
      const { run_id } = await cairn.runs.create({ ...${JSON.stringify(RESEARCHER)}, input: "Research 'cairns'" });
      const seqs = [];
      const types = [];
      let streamedText = '';
      for await (const event of cairn.runs.events(run_id, { include: ['deltas'] })) {
        if (event.type === 'ModelDelta') streamedText += String(event.data.text);
        else {
          seqs.push(event.seq);
          types.push(event.type);
        }
      }
      const run = await cairn.runs.wait(run_id, { timeoutMs: 30000 });
      const error = await cairn.runs.get('no-such-run').catch((e) => e);
      return {
        status: run.status,
        content: run.content,
        seqs,
        types,
        streamedText,
        missing: { name: error instanceof RunNotFound ? 'RunNotFound' : String(error), status: error.status },
      };
    })()`;
    const result = (await page.evaluate(script)) as PageRun;

    expect(result.status).toBe('COMPLETED');
    expect(result.seqs).toEqual(result.seqs.map((_, i) => i + 1));
    expect(result.types.at(-1)).toBe('RunCompleted');
    expect(result.streamedText).toBe(result.content);
    expect(result.missing).toEqual({ name: 'RunNotFound', status: 404 });
  });
});
