import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { serve } from '@hono/node-server';
import { startRunWorker } from '@cairn/queue';
import { createRegistry } from '@cairn/research-team';
import type { RunView } from '@cairn/store';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { createApp } from './app.js';
import type { ProducerClient } from './producer-client.js';
import { openProducerFixture, type ProducerFixture } from './test-support/producer-fixture.js';
import { readSse } from './test-support/read-sse.js';

process.env.RESEARCH_TOOL_DELAY_MS = '20';
process.env.RESEARCH_MODEL_LATENCY_MS = '10';

let fx: ProducerFixture;
let server: Server;
let baseUrl: string;
let listEventsCalls = 0;

beforeEach(async () => {
  fx = await openProducerFixture();
  listEventsCalls = 0;
  const client: ProducerClient = {
    enqueueRun: (request) => fx.client.enqueueRun(request),
    continueRun: (runId, options) => fx.client.continueRun(runId, options),
    cancelRun: (runId) => fx.client.cancelRun(runId),
    decide: (runId, decisions) => fx.client.decide(runId, decisions),
    getRun: (runId, options) => fx.client.getRun(runId, options),
    listRuns: (filter) => fx.client.listRuns(filter),
    listRunMessages: (runId, page) => fx.client.listRunMessages(runId, page),
    listEventsOfTypes: (runId, types) => fx.client.listEventsOfTypes(runId, types),
    getRunStatus: (runId) => fx.client.getRunStatus(runId),
    getSession: (sessionId) => fx.client.getSession(sessionId),
    countRunsByStatus: (status) => fx.client.countRunsByStatus(status),
    runOwner: (runId) => fx.client.runOwner(runId),
    sessionOwner: (sessionId) => fx.client.sessionOwner(sessionId),
    deleteSession: (sessionId) => fx.client.deleteSession(sessionId),
    revokeBrowserSession: (nonce, expiresAt) => fx.client.revokeBrowserSession(nonce, expiresAt),
    isBrowserSessionRevoked: (nonce) => fx.client.isBrowserSessionRevoked(nonce),
    listEvents: (runId, afterSeq) => fx.client.listEvents(runId, afterSeq),
    readRunTreeEvents: (runId, after) => {
      listEventsCalls += 1;
      return fx.client.readRunTreeEvents(runId, after);
    },
  };
  const app = createApp({
    client,
    queues: [fx.queue.queue],
    events: { pollMs: 50, heartbeatMs: 100 },
  });
  server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }) as Server;
  await new Promise<void>((resolve) => server.once('listening', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterEach(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await fx.close();
});

async function createRun(): Promise<string> {
  const res = await fetch(`${baseUrl}/v1/agents/researcher/runs`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ input: 'Find things' }),
  });
  expect(res.status).toBe(202);
  return ((await res.json()) as { run_id: string }).run_id;
}

const append = (runId: string, type: string, data: unknown) =>
  fx.client.store.appendEvent(runId, { type, data });

it('replays after Last-Event-ID, follows new events once and in order, and ends when the run is done', async () => {
  const runId = await createRun();
  await append(runId, 'RunStarted', { epoch: 1 });
  await append(runId, 'ModelRequestStarted', { turn: 1 });
  await append(runId, 'ModelRequestCompleted', { turn: 1 });

  const first = new AbortController();
  const firstResponse = await fetch(`${baseUrl}/v1/runs/${runId}/events`, { signal: first.signal });
  expect(firstResponse.status).toBe(200);
  expect(firstResponse.headers.get('content-type')).toContain('text/event-stream');
  const seen = await readSse(firstResponse, { stopAfter: 2, abort: () => first.abort() });
  expect(seen.map((m) => [m.id, m.event])).toEqual([
    ['1', 'RunStarted'],
    ['2', 'ModelRequestStarted'],
  ]);
  expect(JSON.parse(seen[0]!.data)).toEqual({ epoch: 1 });

  const comments: string[] = [];
  const resumed = await fetch(`${baseUrl}/v1/runs/${runId}/events`, {
    headers: { 'Last-Event-ID': seen[1]!.id! },
  });
  const rest = readSse(resumed, { comments });
  await new Promise((resolve) => setTimeout(resolve, 300));
  await append(runId, 'ToolCallStarted', { name: 'slow_search' });
  await append(runId, 'ToolCallCompleted', { name: 'slow_search' });
  await fx.complete(runId, 'done');
  await append(runId, 'RunCompleted', { content: 'done' });

  const messages = await rest;
  expect(messages.map((m) => [m.id, m.event])).toEqual([
    ['3', 'ModelRequestCompleted'],
    ['4', 'ToolCallStarted'],
    ['5', 'ToolCallCompleted'],
    ['6', 'RunCompleted'],
  ]);
  expect(comments.length).toBeGreaterThan(0);
});

it('honours ?after= and ends at once for a finished run with nothing newer', async () => {
  const runId = await createRun();
  await append(runId, 'RunStarted', {});
  await fx.complete(runId, 'done');
  await append(runId, 'RunCompleted', {});

  const after1 = await readSse(await fetch(`${baseUrl}/v1/runs/${runId}/events?after=1`));
  expect(after1.map((m) => m.id)).toEqual(['2']);
  const all = await readSse(await fetch(`${baseUrl}/v1/runs/${runId}/events`));
  expect(all.map((m) => m.event)).toEqual(['RunStarted', 'RunCompleted']);

  const bad = await fetch(`${baseUrl}/v1/runs/${runId}/events?after=-3`);
  expect(bad.status).toBe(400);
  expect(await bad.json()).toMatchObject({
    error: 'invalid_parameter',
    message: expect.stringContaining('after'),
  });
});

it('streams a run a real worker executes, from RunStarted to RunCompleted, and serves the finished run', async () => {
  const worker = startRunWorker({
    runQueue: fx.queue,
    store: fx.client.store,
    registry: createRegistry(),
    workerId: 'w-test',
  });
  try {
    const res = await fetch(`${baseUrl}/v1/teams/research-team/runs`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ input: 'Research durable execution', checkpoint: 'tool-batch' }),
    });
    expect(res.status).toBe(202);
    const { run_id } = (await res.json()) as { run_id: string };
    const events = await readSse(await fetch(`${baseUrl}/v1/runs/${run_id}/events`));
    expect(events[0]?.event).toBe('RunStarted');
    expect(events.at(-1)?.event).toBe('RunCompleted');
    expect(events.map((e) => Number(e.id))).toEqual(events.map((_, i) => i + 1));
    expect(events.some((e) => e.event === 'CheckpointCommitted')).toBe(true);

    const run = (await (await fetch(`${baseUrl}/v1/runs/${run_id}`)).json()) as RunView;
    expect(run.status).toBe('COMPLETED');
    expect(run.content).toEqual(expect.any(String));
    expect(run.member_runs).toHaveLength(1);
    expect(run.attempts).toHaveLength(1);
  } finally {
    await worker.close();
  }
});

it('stops following a run once its client disconnects', async () => {
  const runId = await createRun();
  await append(runId, 'RunStarted', {});
  const abort = new AbortController();
  const response = await fetch(`${baseUrl}/v1/runs/${runId}/events`, { signal: abort.signal });
  expect(await readSse(response, { stopAfter: 1, abort: () => abort.abort() })).toHaveLength(1);
  await new Promise((resolve) => setTimeout(resolve, 200));
  const callsAfterDisconnect = listEventsCalls;
  await new Promise((resolve) => setTimeout(resolve, 500));
  expect(listEventsCalls).toBe(callsAfterDisconnect);
});
