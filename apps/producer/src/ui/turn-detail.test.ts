import { afterEach, expect, it } from 'vitest';
import { openProducerFixture, type ProducerFixture } from '../test-support/producer-fixture.js';

let fx: ProducerFixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

it("shows a turn's request (the messages since the previous turn) and its response, or says it is not stored; bad indexes (past what a message index can be included) are 400s naming the field, an unknown run a 404", async () => {
  fx = await openProducerFixture();
  const { app } = fx;
  const { store } = fx;
  const { engine } = fx.client;
  const run = await engine.createRun({
    entity: { kind: 'agent', name: 'researcher' },
    input: 'Research the turn page',
    checkpoint: 'tool-batch',
  });
  const runId = run.runId;
  const { epoch } = await store.claimRun(runId, { workerId: 'test-worker', reason: 'run' });
  await store.finishRun(runId, epoch, {
    status: 'COMPLETED',
    content: 'the answer',
    error: null,
    delta: {
      messages: [
        { role: 'user', content: 'Research the turn page' },
        { role: 'assistant', content: 'the answer' },
      ],
      toolCalls: [],
      usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
    },
  });

  const turn = await (await app.request(`/ui/runs/${runId}/turns/1?from=0`)).text();
  const request = turn.slice(turn.indexOf('<h4>Request'), turn.indexOf('<h4>Response'));
  expect(request).toContain('Research the turn page');
  expect(turn.slice(turn.indexOf('<h4>Response'))).toContain('the answer');
  // A turn whose response is not stored (its attempt ended before a checkpoint) says so.
  expect(await (await app.request(`/ui/runs/${runId}/turns/2?from=2`)).text()).toContain(
    'Not stored (yet)',
  );

  // The largest index a message can have is a page like any other.
  expect(await (await app.request(`/ui/runs/${runId}/turns/2147483647`)).text()).toContain(
    'Not stored (yet)',
  );
  // One past it, or past any safe integer, cannot be stored: a 400, never a 500 from Postgres.
  for (const [path, field] of [
    [`/ui/runs/${runId}/turns/one`, 'index'],
    [`/ui/runs/${runId}/turns/1?from=-1`, 'from'],
    [`/ui/runs/${runId}/turns/2147483648`, 'index'],
    [`/ui/runs/${runId}/turns/9007199254740993`, 'index'],
    [`/ui/runs/${runId}/turns/1?from=2147483648`, 'from'],
    [`/ui/runs/${runId}?page=2147483648`, 'page'],
  ] as const) {
    const res = await app.request(path);
    expect(res.status, path).toBe(400);
    expect(await res.text()).toContain(`${field}: must be a `);
  }
  expect((await app.request('/ui/runs/no-such-run/turns/0')).status).toBe(404);
});

it("answers another tenant's key a 404 for a run's turn, as for the run's page", async () => {
  fx = await openProducerFixture({ apiKeys: ['acme:acme-key', 'globex:globex-key'] });
  const { app } = fx;
  const created = await app.request('/v1/agents/researcher/runs', {
    method: 'POST',
    headers: { Authorization: 'Bearer acme-key', 'Content-Type': 'application/json' },
    body: JSON.stringify({ input: 'for acme only' }),
  });
  expect(created.status).toBe(202);
  const runId = ((await created.json()) as { run_id: string }).run_id;
  const turn = (key: string) =>
    app.request(`/ui/runs/${runId}/turns/0`, { headers: { Authorization: `Bearer ${key}` } });
  expect((await turn('acme-key')).status).toBe(200);
  expect((await turn('globex-key')).status).toBe(404);
});
