import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, expect, it } from 'vitest';
import { createClient } from './create-client.js';
import { Gone, PreconditionFailed, ServerError, Unprocessable } from './errors.js';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: unknown;
}

let server: Server | undefined;
afterEach(
  () => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())),
);

/** A real HTTP server answering each request with the next canned reply and recording what it got. */
async function serve(
  replies: { status: number; body: unknown }[],
): Promise<{ baseUrl: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString()));
    req.on('end', () => {
      seen.push({
        method: req.method!,
        url: req.url!,
        headers: req.headers,
        body: raw ? JSON.parse(raw) : undefined,
      });
      const reply = replies.shift() ?? { status: 500, body: 'no reply left' };
      res.writeHead(reply.status, {
        'Content-Type': typeof reply.body === 'string' ? 'text/plain' : 'application/json',
      });
      res.end(typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body));
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { baseUrl: `http://127.0.0.1:${(server!.address() as AddressInfo).port}/`, seen };
}

it('sends decisions and idempotency keys as the API contract says, with the bearer key', async () => {
  const decided = { applied: ['act-1'], already_decided: [], pending: 0, status: 'PAUSED' };
  const { baseUrl, seen } = await serve([
    { status: 200, body: decided },
    { status: 202, body: { run_id: 'r1', session_id: 's1', status: 'PENDING' } },
  ]);
  const cairn = createClient({ baseUrl, apiKey: 'k' });
  const decisions = [
    { action_id: 'act-1', type: 'approve' as const },
    { action_id: 'act-2', type: 'edit' as const, args: { query: 'x' }, args_digest: 'd2' },
    { action_id: 'act-3', type: 'reject' as const, message: 'no' },
    { action_id: 'act-4', type: 'result' as const, output: '42', is_error: false },
  ];
  expect(await cairn.runs.decide('run/1', decisions)).toEqual(decided);
  await cairn.runs.create(
    { kind: 'agent', name: 'researcher', input: 'hi', session_id: 's1' },
    { idempotencyKey: 'idem-1' },
  );
  expect(seen[0]).toMatchObject({
    method: 'POST',
    url: '/v1/runs/run%2F1/decisions',
    body: { decisions },
  });
  expect(seen[0]!.headers.authorization).toBe('Bearer k');
  expect(seen[1]).toMatchObject({
    method: 'POST',
    url: '/v1/agents/researcher/runs',
    body: { input: 'hi', session_id: 's1' },
  });
  expect(seen[1]!.headers['idempotency-key']).toBe('idem-1');
});

it('maps decision errors and non-JSON failures to typed errors carrying the status and message', async () => {
  const { baseUrl } = await serve([
    { status: 410, body: { error: 'action_expired', message: 'action act-1 expired' } },
    { status: 412, body: { error: 'args_digest_mismatch', message: 'args changed' } },
    { status: 422, body: { error: 'invalid_args', message: 'query: required' } },
    { status: 502, body: 'Bad Gateway' },
  ]);
  const cairn = createClient({ baseUrl });
  const decide = () =>
    cairn.runs
      .decide('r1', [{ action_id: 'act-1', type: 'approve' }])
      .catch((error: unknown) => error);
  expect(await decide()).toEqual(
    expect.objectContaining({
      constructor: Gone,
      status: 410,
      code: 'action_expired',
      message: 'action act-1 expired',
    }),
  );
  expect(await decide()).toBeInstanceOf(PreconditionFailed);
  expect(await decide()).toBeInstanceOf(Unprocessable);
  expect(await decide()).toEqual(
    expect.objectContaining({
      constructor: ServerError,
      status: 502,
      code: 'http_502',
      message: 'Bad Gateway',
    }),
  );
});

it('refuses a base URL that is not http(s)', () => {
  expect(() => createClient({ baseUrl: 'localhost:3000' })).toThrow(
    /baseUrl must be an http\(s\) URL, got "localhost:3000"/,
  );
});

it("follows a team's stream across a dropped connection by its cursor ids: each event once, members marked, even when the server replays from the start", async () => {
  const member = (seq: number) => ({
    run_id: 'm1',
    member_path: ['team', 'researcher'],
    member_seq: seq,
  });
  // Cursors as the producer writes them: the team's seq, then `.<member key>-<seq>` per member run.
  const events = [
    { id: '1', event: 'RunStarted', data: {} },
    { id: '1.0123456789ab-1', event: 'RunStarted', data: member(1) },
    { id: '2.0123456789ab-1', event: 'ToolCallStarted', data: {} },
    { id: '2.0123456789ab-2', event: 'ToolCallStarted', data: member(2) },
    { id: '3.0123456789ab-2', event: 'RunCompleted', data: {} },
  ];
  const sse = (list: typeof events) =>
    list.map((e) => `id: ${e.id}\nevent: ${e.event}\ndata: ${JSON.stringify(e.data)}\n\n`).join('');
  const resumedWith: (string | undefined)[] = [];
  server = createServer((req, res) => {
    resumedWith.push(req.headers['last-event-id'] as string | undefined);
    res.writeHead(200, { 'Content-Type': 'text/event-stream' });
    // The first connection drops after three events; the second ignores Last-Event-ID and replays everything.
    if (resumedWith.length === 1) res.write(sse(events.slice(0, 3)), () => res.destroy());
    else res.end(sse(events));
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const cairn = createClient({
    baseUrl: `http://127.0.0.1:${(server!.address() as AddressInfo).port}`,
  });

  const seen = [];
  for await (const event of cairn.runs.events('team-run', { reconnect: { initialDelayMs: 10 } }))
    seen.push(event);
  expect(resumedWith).toEqual([undefined, '2.0123456789ab-1']);
  expect(seen.map((e) => [e.cursor, e.type, e.seq, e.member?.runId])).toEqual([
    ['1', 'RunStarted', 1, undefined],
    ['1.0123456789ab-1', 'RunStarted', 1, 'm1'],
    ['2.0123456789ab-1', 'ToolCallStarted', 2, undefined],
    ['2.0123456789ab-2', 'ToolCallStarted', 2, 'm1'],
    ['3.0123456789ab-2', 'RunCompleted', 3, undefined],
  ]);
  expect(seen[1]!.member?.path).toEqual(['team', 'researcher']);
});
