import type { Message, ToolCallRecord } from '@cairn/engine';
import { requiresChromium } from '@cairn/services';
import { sql } from 'kysely';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESEARCHER } from '../fleet/fleet.js';
import { launchChromium, screenshotPath } from './chromium.js';
import { startUiStack, type UiStack } from './ui-stack.js';

const OTHER_RUNS = 100_000;
const TURNS = 500;
const MODEL = 'scripted:researcher';

/** A finished agent run of `TURNS` turns, each one tool call, stored as a worker stores it (messages, tool rows, events). */
async function storeLongRun(stack: UiStack): Promise<string> {
  const { store, engine } = stack.fleet.client;
  const run = await engine.createRun({
    entity: RESEARCHER,
    input: 'a long run',
    checkpoint: 'tool-batch',
  });
  const { epoch } = await store.claimRun(run.runId, { workerId: 'test-worker', reason: 'run' });
  const start = Date.now();
  const at = (ms: number) => new Date(start + ms);
  const messages: Message[] = [{ role: 'user', content: 'a long run' }];
  const toolCalls: ToolCallRecord[] = [];
  const events = [];
  for (let i = 0; i < TURNS; i++) {
    const t = i * 30;
    events.push(
      {
        type: 'ModelRequestStarted',
        data: { model: MODEL, messages: messages.length, epoch, at: at(t).toISOString() },
      },
      {
        type: 'ModelRequestCompleted',
        data: {
          model: MODEL,
          toolCalls: 1,
          usage: { totalTokens: 10 },
          epoch,
          at: at(t + 10).toISOString(),
        },
      },
    );
    const id = `call-${i}`;
    // A worker stores each call's start and end too.
    events.push(
      {
        type: 'ToolCallStarted',
        data: {
          toolCallId: id,
          name: 'slow_search',
          batch: i + 1,
          epoch,
          at: at(t + 10).toISOString(),
        },
      },
      {
        type: 'ToolCallCompleted',
        data: { toolCallId: id, name: 'slow_search', epoch, at: at(t + 30).toISOString() },
      },
    );
    messages.push(
      {
        role: 'assistant',
        content: '',
        toolCalls: [{ id, name: 'slow_search', arguments: `{"query":"q${i}"}` }],
      },
      { role: 'tool', toolCallId: id, name: 'slow_search', content: `result ${i}` },
    );
    toolCalls.push({
      toolCallId: id,
      name: 'slow_search',
      args: { query: `q${i}` },
      result: `result ${i}`,
      status: 'completed',
      batch: i + 1,
      idempotencyKey: `${run.runId}:${id}`,
      childRunId: null,
      startedAt: at(t + 10),
      endedAt: at(t + 30),
    });
  }
  await store.appendEvents(run.runId, events);
  await store.finishRun(run.runId, epoch, {
    status: 'COMPLETED',
    content: 'done',
    error: null,
    delta: { messages, toolCalls, usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 } },
  });
  return run.runId;
}

/** `rounds` timed GETs of `url` (after one untimed), in ms, fastest first. */
async function timedGets(url: string, rounds: number): Promise<number[]> {
  await (await fetch(url)).text();
  const samples: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const begin = performance.now();
    const res = await fetch(url);
    await res.text();
    samples.push(performance.now() - begin);
    expect(res.status).toBe(200);
  }
  return samples.sort((a, b) => a - b);
}

describe('the run page waterfall in a store of 100,000 runs', requiresChromium(), () => {
  let stack: UiStack;
  let browser: Browser;

  beforeAll(async () => {
    stack = await startUiStack();
    browser = await launchChromium();
    const db = stack.fleet.client.store.db;
    await sql`
      insert into sessions (session_id, tenant_id)
      select 'bulk-s' || g, null from generate_series(0, ${OTHER_RUNS / 100 - 1}) g`.execute(db);
    await sql`
      insert into runs (run_id, session_id, tenant_id, entity_kind, entity_name, status, input,
                        checkpoint, created_at, updated_at)
      select 'bulk-r' || g, 'bulk-s' || (g / 100), null, 'agent', 'researcher',
             (case when g % 10 = 0 then 'ERROR' else 'COMPLETED' end), 'input ' || g, 'tool-batch',
             now() - (g * interval '26 seconds'), now() - (g * interval '26 seconds') + interval '20 seconds'
        from generate_series(0, ${OTHER_RUNS - 1}) g`.execute(db);
    await sql`analyze`.execute(db);
  });
  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
  });

  it(`answers a ${TURNS}-turn run's page within 200 ms (its fastest of 20), drawing the latest bars and saying how many it left out`, async () => {
    const runId = await storeLongRun(stack);
    const url = `${stack.baseUrl}/ui/runs/${runId}`;
    const samples = await timedGets(url, 20);
    const median = samples[Math.floor(samples.length / 2)]!;
    console.log(
      `run page of a ${TURNS}-turn run among ${OTHER_RUNS} runs: fastest ${samples[0]!.toFixed(1)} ms, median ${median.toFixed(1)} ms of 20`,
    );
    // The machine's load (other test files run beside this one) decides the median; the fastest
    // answer is the page's own cost, which a read that grew with the store would push past the goal.
    expect(samples[0]).toBeLessThan(200);

    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(url);
    const capped = page.locator('.wf-capped');
    expect(await capped.getAttribute('data-total')).toBe(String(2 * TURNS));
    expect(await capped.getAttribute('data-drawn')).toBe('300');
    expect(await page.locator('.wf .wf-bar').count()).toBe(300);
    // The latest are drawn: the last call is, the first is not.
    expect(await page.locator('.wf-row[data-tool-call-id="call-499"]').count()).toBe(1);
    expect(await page.locator('.wf-row[data-tool-call-id="call-0"]').count()).toBe(0);
    await page.locator('#waterfall').screenshot({ path: screenshotPath('waterfall-capped.png') });
    await page.close();
  });
});
