import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { serve } from '@hono/node-server';
import { startRunWorker } from '@cairn/queue';
import { createRegistry } from '@cairn/research-team';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createApp } from './app.js';
import type { ProducerClient } from './producer-client.js';
import { openProducerFixture, type ProducerFixture } from './test-support/producer-fixture.js';
import { readSse, type SseMessage } from './test-support/read-sse.js';

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
    servedEntities: () => fx.client.servedEntities(),
    continueRun: (runId, options) => fx.client.continueRun(runId, options),
    forkRun: (runId, request) => fx.client.forkRun(runId, request),
    cancelRun: (runId) => fx.client.cancelRun(runId),
    suspendRun: (runId, options) => fx.client.suspendRun(runId, options),
    resumeRun: (runId) => fx.client.resumeRun(runId),
    decide: (runId, decisions) => fx.client.decide(runId, decisions),
    getRun: (runId, options) => fx.client.getRun(runId, options),
    listRuns: (filter) => fx.client.listRuns(filter),
    listRunMessages: (runId, page) => fx.client.listRunMessages(runId, page),
    listEventsOfTypes: (runId, types) => fx.client.listEventsOfTypes(runId, types),
    getRunStatus: (runId) => fx.client.getRunStatus(runId),
    getSession: (sessionId) => fx.client.getSession(sessionId),
    countRunsByStatus: (status) => fx.client.countRunsByStatus(status),
    fleetOverview: (scope) => fx.client.fleetOverview(scope),
    runOwner: (runId) => fx.client.runOwner(runId),
    runSession: (runId) => fx.client.runSession(runId),
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
  fx.store.appendEvent(runId, { type, data });

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
  // A heartbeat comment: the resumed stream has sent its backlog and follows the run live.
  await expect.poll(() => comments.length, { timeout: 10_000 }).toBeGreaterThan(0);
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

  // The largest seq an event can have is a cursor like any other: nothing after it.
  expect(await readSse(await fetch(`${baseUrl}/v1/runs/${runId}/events?after=2147483647`))).toEqual(
    [],
  );
  // A seq no event can have (past Postgres' integer), the run's or a member's, is refused up front.
  for (const after of ['-3', '2147483648', '9007199254740993', '1.0123456789ab-2147483648']) {
    const bad = await fetch(`${baseUrl}/v1/runs/${runId}/events?after=${after}`);
    expect(bad.status, after).toBe(400);
    expect(await bad.json()).toMatchObject({
      error: 'invalid_parameter',
      message: expect.stringContaining('after'),
    });
  }
});

/** Parsed SSE messages of a team's stream: the member's carry `run_id`, `member_path` and `member_seq`. */
function parsed(messages: SseMessage[]) {
  return messages.map((m) => {
    const data = JSON.parse(m.data) as {
      run_id?: string;
      member_path?: string[];
      member_seq?: number;
    };
    return {
      id: m.id!,
      type: m.event!,
      runId: data.run_id,
      memberPath: data.member_path,
      seq: data.member_seq ?? Number(m.id!.split('.')[0]),
    };
  });
}

/** The stored events of the team and of its member runs, as [run_id, seq, type]. */
async function storedTree(teamRunId: string): Promise<[string, number, string][]> {
  const view = (await fx.client.getRun(teamRunId))!;
  const rows: [string, number, string][] = [];
  for (const runId of [teamRunId, ...view.member_runs.map((m) => m.run_id)])
    for (const e of await fx.client.listEvents(runId, 0)) rows.push([runId, e.seq, e.type]);
  return rows;
}

it("streams a team a real worker executes with its member's events (run_id, member_path), ends after the team's RunCompleted, and resumes exactly from a team or a member event id", async () => {
  const worker = startRunWorker({
    runQueue: fx.queue,
    store: fx.store,
    registry: createRegistry({ scriptedToolCallIds: 'fresh' }),
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

    // Followed live, dropped once the member's first tool call completed, resumed from that member event's id.
    const abort = new AbortController();
    const first = await fetch(`${baseUrl}/v1/runs/${run_id}/events`, { signal: abort.signal });
    const head = await readSse(first, {
      stopAt: (m) => m.event === 'ToolCallCompleted',
      abort: () => abort.abort(),
    });
    const cut = parsed(head).at(-1)!;
    expect(cut).toMatchObject({
      type: 'ToolCallCompleted',
      memberPath: ['research-team', 'researcher'],
    });
    const rest = parsed(
      await readSse(
        await fetch(`${baseUrl}/v1/runs/${run_id}/events`, {
          headers: { 'Last-Event-ID': cut.id },
        }),
      ),
    );
    const events = [...parsed(head), ...rest];

    const view = (await fx.client.getRun(run_id))!;
    expect(view.status).toBe('COMPLETED');
    const member = view.member_runs[0]!.run_id;
    const stored = await storedTree(run_id);
    // Every stored event of the tree once, each run's in seq order; the stream ends with the team's RunCompleted.
    expect(events.map((e) => [e.runId ?? run_id, e.seq, e.type]).sort()).toEqual(
      [...stored].sort(),
    );
    for (const runId of [run_id, member]) {
      const seqs = events.filter((e) => (e.runId ?? run_id) === runId).map((e) => e.seq);
      expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    }
    expect(events.at(-1)).toMatchObject({ type: 'RunCompleted', runId: undefined });
    const ofMember = events.filter((e) => e.runId !== undefined);
    expect(
      ofMember.every(
        (e) => e.runId === member && e.memberPath?.join('/') === 'research-team/researcher',
      ),
    ).toBe(true);
    for (const type of [
      'ToolCallStarted',
      'ToolCallCompleted',
      'CheckpointCommitted',
      'RunCompleted',
    ])
      expect(
        ofMember.some((e) => e.type === type),
        type,
      ).toBe(true);
    expect(ofMember.filter((e) => e.type === 'RunCompleted')).toHaveLength(1);
    expect(events.filter((e) => e.type === 'RunCompleted')).toHaveLength(2);
    // Once the member has sent events the ids are cursors: the team's seq, then the member's, keyed by its run id.
    expect(events.at(-1)!.id).toBe(
      `${events.at(-1)!.seq}.${member.replace(/-/g, '').slice(0, 12)}-${ofMember.at(-1)!.seq}`,
    );

    // From any event's id, the finished stream replays exactly what followed it.
    const all = parsed(await readSse(await fetch(`${baseUrl}/v1/runs/${run_id}/events`)));
    expect(all.map((e) => [e.runId, e.seq, e.type]).sort()).toEqual(
      events.map((e) => [e.runId, e.seq, e.type]).sort(),
    );
    const lastOfTeam = all.findLastIndex(
      (e, i) => e.runId === undefined && all.slice(i + 1).some((f) => f.runId !== undefined),
    );
    const lastOfMember = all.findLastIndex((e) => e.runId !== undefined);
    for (const at of [lastOfTeam, lastOfMember, Math.floor(all.length / 2)]) {
      const resumed = await readSse(
        await fetch(`${baseUrl}/v1/runs/${run_id}/events?after=${all[at]!.id}`),
      );
      expect(
        parsed(resumed).map((e) => e.id),
        `after ${all[at]!.id}`,
      ).toEqual(all.slice(at + 1).map((e) => e.id));
    }
    // A bare integer is the team's own seq: the member's events then come from their start.
    const fromTeamSeq = parsed(
      await readSse(
        await fetch(`${baseUrl}/v1/runs/${run_id}/events`, { headers: { 'Last-Event-ID': '2' } }),
      ),
    );
    expect(fromTeamSeq.filter((e) => e.runId === undefined).map((e) => e.seq)[0]).toBe(3);
    expect(fromTeamSeq.filter((e) => e.runId !== undefined)).toHaveLength(ofMember.length);

    for (const [header, value] of [
      ['Last-Event-ID', '3.x'],
      ['after', '1..2'],
      ['after', '1.-2'],
      ['after', '4.2'],
    ] as const) {
      const bad = await fetch(
        `${baseUrl}/v1/runs/${run_id}/events${header === 'after' ? `?after=${encodeURIComponent(value)}` : ''}`,
        { headers: header === 'Last-Event-ID' ? { 'Last-Event-ID': value } : {} },
      );
      expect(bad.status, value).toBe(400);
      expect(await bad.json()).toMatchObject({
        error: 'invalid_parameter',
        message: expect.stringContaining(header),
      });
    }
  } finally {
    await worker.close();
  }
});

it('keeps each run in its place when a member run created earlier is seen later: none of its events lost, none repeated', async () => {
  const store = fx.store;
  const team = await store.createRun({
    entity: { kind: 'team', name: 'research-team' },
    input: 'x',
    checkpoint: 'tool-batch',
  });
  const member = (name: string) =>
    store.createRun({
      entity: { kind: 'agent', name },
      input: 'x',
      checkpoint: 'tool-batch',
      parentRunId: team.runId,
    });
  const later = await member('research-team/researcher');
  await append(team.runId, 'RunStarted', {});
  await append(later.runId, 'RunStarted', {});

  const readsBefore = listEventsCalls;
  const stream = readSse(await fetch(`${baseUrl}/v1/runs/${team.runId}/events`));
  // A second read of the tree begun: the stream has sent what its first read found.
  await expect.poll(() => listEventsCalls, { timeout: 10_000 }).toBeGreaterThan(readsBefore + 1);
  // What a creation whose transaction began first but committed last stores: an earlier created_at.
  const earlier = await member('research-team/analyst');
  await store.db
    .updateTable('runs')
    .set({ created_at: new Date(Date.now() - 60_000) })
    .where('run_id', '=', earlier.runId)
    .execute();
  await append(earlier.runId, 'RunStarted', {});
  await append(earlier.runId, 'ToolCallStarted', {});
  await append(later.runId, 'ToolCallStarted', {});
  // Two reads begun after these appends: the first of them, done, has sent them.
  const readsAfterAppends = listEventsCalls;
  await expect
    .poll(() => listEventsCalls, { timeout: 10_000 })
    .toBeGreaterThan(readsAfterAppends + 1);
  await fx.complete(team.runId, 'done');
  await append(team.runId, 'RunCompleted', {});

  const events = parsed(await stream);
  expect(events.map((e) => [e.runId ?? team.runId, e.seq, e.type]).sort()).toEqual(
    [
      [team.runId, 1, 'RunStarted'],
      [later.runId, 1, 'RunStarted'],
      [earlier.runId, 1, 'RunStarted'],
      [earlier.runId, 2, 'ToolCallStarted'],
      [later.runId, 2, 'ToolCallStarted'],
      [team.runId, 2, 'RunCompleted'],
    ].sort(),
  );
  // Its cursor names each member by its run id: the earlier creation seen later shifted nothing.
  const key = (id: string) => id.replace(/-/g, '').slice(0, 12);
  const last = events.at(-1)!;
  expect(last.type).toBe('RunCompleted');
  expect(last.id.split('.').sort()).toEqual(
    ['2', `${key(later.runId)}-2`, `${key(earlier.runId)}-2`].sort(),
  );
  // Resuming from the cursor sent before the late creation loses none of the late member's events.
  const beforeLate = events.find((e) => e.runId === later.runId && e.type === 'RunStarted')!;
  const resumed = parsed(
    await readSse(
      await fetch(`${baseUrl}/v1/runs/${team.runId}/events`, {
        headers: { 'Last-Event-ID': beforeLate.id },
      }),
    ),
  );
  expect(resumed.map((e) => [e.runId ?? team.runId, e.seq, e.type]).sort()).toEqual(
    events
      .slice(events.indexOf(beforeLate) + 1)
      .map((e) => [e.runId ?? team.runId, e.seq, e.type])
      .sort(),
  );
});

it('stops following a run once its client disconnects', async () => {
  const runId = await createRun();
  await append(runId, 'RunStarted', {});
  const abort = new AbortController();
  const response = await fetch(`${baseUrl}/v1/runs/${runId}/events`, { signal: abort.signal });
  expect(await readSse(response, { stopAfter: 1, abort: () => abort.abort() })).toHaveLength(1);
  // Fixed times: the server exposes no event for noticing a disconnect, and the claim is that no read
  // happens within a window (ten 50 ms polls).
  await new Promise((resolve) => setTimeout(resolve, 200));
  const callsAfterDisconnect = listEventsCalls;
  await new Promise((resolve) => setTimeout(resolve, 500));
  expect(listEventsCalls).toBe(callsAfterDisconnect);
});

describe('concurrent streams per key', () => {
  const servers: Server[] = [];
  afterEach(async () => {
    for (const s of servers.splice(0)) {
      s.closeAllConnections();
      await new Promise<void>((resolve) => s.close(() => resolve()));
    }
  });

  /** Serves a producer on the fixture's client with `overrides`, capped at `maxStreamsPerKey` streams. */
  async function serveCapped(maxStreamsPerKey: number, apiKeys?: string[]): Promise<string> {
    const app = createApp({
      client: fx.client,
      queues: [fx.queue.queue],
      apiKeys,
      events: { pollMs: 50, heartbeatMs: 100, maxStreamsPerKey },
    });
    const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }) as Server;
    servers.push(s);
    await new Promise<void>((resolve) => s.once('listening', resolve));
    return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
  }

  /** Opens a run's event stream as `key`; `close` disconnects it. */
  async function openStream(
    url: string,
    runId: string,
    key?: string,
  ): Promise<{ response: Response; close: () => void }> {
    const abort = new AbortController();
    const response = await fetch(`${url}/v1/runs/${runId}/events`, {
      headers: key ? { Authorization: `Bearer ${key}` } : {},
      signal: abort.signal,
    });
    return { response, close: () => abort.abort() };
  }

  it('answers 429 with Retry-After beyond the cap for one key, leaves other keys alone, and frees a slot when a client disconnects', async () => {
    const url = await serveCapped(2, ['key-one-0123456789', 'key-two-0123456789']);
    const runId = await createRun();
    // A stream asked for a run that does not exist takes no slot.
    expect((await openStream(url, 'no-such-run', 'key-one-0123456789')).response.status).toBe(404);
    const first = await openStream(url, runId, 'key-one-0123456789');
    const second = await openStream(url, runId, 'key-one-0123456789');
    expect([first.response.status, second.response.status]).toEqual([200, 200]);

    const refused = await openStream(url, runId, 'key-one-0123456789');
    expect(refused.response.status).toBe(429);
    expect(Number(refused.response.headers.get('Retry-After'))).toBeGreaterThan(0);
    expect(await refused.response.json()).toMatchObject({
      error: 'too_many_streams',
      message: expect.stringContaining('2 open event streams'),
    });
    // Another key has slots of its own.
    const other = await openStream(url, runId, 'key-two-0123456789');
    expect(other.response.status).toBe(200);
    other.close();

    first.close();
    let reopened: Response | undefined;
    const deadline = Date.now() + 5_000;
    while (Date.now() < deadline) {
      const attempt = await openStream(url, runId, 'key-one-0123456789');
      if (attempt.response.status === 200) {
        reopened = attempt.response;
        attempt.close();
        break;
      }
      await attempt.response.body?.cancel();
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(reopened?.status, 'a stream after one of the two disconnected').toBe(200);
    second.close();
  });

  it('with auth off, caps the streams of one client address', async () => {
    const url = await serveCapped(1);
    const runId = await createRun();
    const first = await openStream(url, runId);
    expect(first.response.status).toBe(200);
    const refused = await openStream(url, runId);
    expect(refused.response.status).toBe(429);
    expect(await refused.response.json()).toMatchObject({
      error: 'too_many_streams',
      message: expect.stringContaining('client address'),
    });
    first.close();
  });
});
