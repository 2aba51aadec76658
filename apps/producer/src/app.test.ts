import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunView } from '@cairn/store';
import { openProducerFixture, type ProducerFixture } from './test-support/producer-fixture.js';

let fx: ProducerFixture;

/** The `/readyz` check that covers the queue: `redis` on the Redis backend, `queue` on the PostgreSQL one. */
const queueCheck = () => (fx.queue.backend === 'redis' ? 'redis' : 'queue');

afterEach(async () => {
  await fx.close();
});

function post(
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return Promise.resolve(
    fx.app.request(path, {
      method: 'POST',
      body: text,
      headers: { 'Content-Type': 'application/json', ...headers },
    }),
  );
}

async function createRun(
  body: unknown = { input: 'Research durable queues' },
): Promise<{ run_id: string; session_id: string }> {
  const res = await post('/v1/teams/research-team/runs', body);
  expect(res.status).toBe(202);
  return (await res.json()) as { run_id: string; session_id: string };
}

describe('runs API', () => {
  beforeEach(async () => {
    fx = await openProducerFixture();
  });

  it('enqueues a team run and returns it PENDING in the stored shape', async () => {
    const res = await post('/v1/teams/research-team/runs', {
      input: 'Research X',
      checkpoint: 'tool-batch',
      metadata: { a: 1 },
    });
    expect(res.status).toBe(202);
    const created = (await res.json()) as { run_id: string; session_id: string; status: string };
    expect(created).toMatchObject({ status: 'PENDING' });
    expect(created.run_id).toEqual(expect.any(String));

    const got = await fx.app.request(`/v1/runs/${created.run_id}`);
    expect(got.status).toBe(200);
    const run = (await got.json()) as RunView;
    expect(run).toMatchObject({
      run_id: created.run_id,
      session_id: created.session_id,
      entity: { kind: 'team', name: 'research-team' },
      status: 'PENDING',
      input: 'Research X',
      checkpoint: 'tool-batch',
      last_checkpoint_at_message_index: 0,
      metadata: { a: 1 },
      member_runs: [],
      attempts: [],
    });
    const jobs = await fx.queue.queue.getJobCounts();
    expect((jobs.waiting ?? 0) + (jobs.prioritized ?? 0)).toBe(1);
  });

  it('enqueues an agent run in the given session and lists it under the session', async () => {
    const res = await post('/v1/agents/researcher/runs', {
      input: 'Find things',
      session_id: 'sess-1',
      user_id: 'u-1',
    });
    expect(res.status).toBe(202);
    const created = (await res.json()) as { run_id: string; session_id: string };
    expect(created.session_id).toBe('sess-1');
    const session = await fx.app.request('/v1/sessions/sess-1');
    expect(session.status).toBe(200);
    expect(await session.json()).toMatchObject({
      session_id: 'sess-1',
      user_id: 'u-1',
      runs: [{ run_id: created.run_id }],
    });
    expect((await fx.app.request('/v1/sessions/nope')).status).toBe(404);
  });

  it("enqueues a run of a team's member by its path (percent-encoded), and by its plain name while it is unique", async () => {
    for (const [path, name] of [
      ['/v1/agents/research-team%2Fresearcher/runs', 'research-team/researcher'],
      ['/v1/agents/researcher/runs', 'researcher'],
    ]) {
      const res = await post(path!, { input: 'Find things' });
      expect(res.status).toBe(202);
      const { run_id } = (await res.json()) as { run_id: string };
      const run = (await (await fx.app.request(`/v1/runs/${run_id}`)).json()) as RunView;
      expect(run.entity).toEqual({ kind: 'agent', name });
    }
    expect((await post('/v1/agents/other-team%2Fresearcher/runs', { input: 'x' })).status).toBe(
      404,
    );
  });

  it('answers 404 for an unknown entity, in JSON', async () => {
    for (const path of ['/v1/teams/nobody/runs', '/v1/agents/research-team/runs']) {
      const res = await post(path, { input: 'x' });
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({
        error: 'entity_not_found',
        message: expect.stringContaining('registry'),
      });
    }
  });

  it.each([
    ['missing input', {}, 'input'],
    ['input not a string', { input: 42 }, 'input'],
    ['blank input', { input: '   ' }, 'input'],
    ['unknown checkpoint', { input: 'x', checkpoint: 'sometimes' }, 'checkpoint'],
    ['extra unknown field', { input: 'x', priority: 'high' }, 'priority'],
    ['metadata not an object', { input: 'x', metadata: 'no' }, 'metadata'],
  ])('answers 400 naming the field for %s', async (_label, body, field) => {
    const res = await post('/v1/teams/research-team/runs', body);
    expect(res.status).toBe(400);
    const payload = (await res.json()) as {
      error: string;
      message: string;
      issues: { path: string }[];
    };
    expect(payload.error).toBe('invalid_body');
    expect(payload.issues.map((i) => i.path)).toContain(field);
    expect(payload.message).toContain(field);
  });

  it('answers 400 for invalid JSON and 413 for an oversized body', async () => {
    const bad = await post('/v1/teams/research-team/runs', '{"input": ');
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: 'invalid_json' });

    const big = await post('/v1/teams/research-team/runs', { input: 'x'.repeat(2 * 1024 * 1024) });
    expect(big.status).toBe(413);
    expect(await big.json()).toMatchObject({ error: 'payload_too_large' });
    expect(await fx.queue.queue.getJobCounts()).toMatchObject({ waiting: 0 });
  });

  it('answers 404 for an unknown run on GET, continue, cancel and events', async () => {
    expect((await fx.app.request('/v1/runs/missing')).status).toBe(404);
    const cont = await post('/v1/runs/missing/continue', {});
    expect(cont.status).toBe(404);
    expect(await cont.json()).toMatchObject({ error: 'run_not_found' });
    expect((await post('/v1/runs/missing/cancel', {})).status).toBe(404);
    expect((await fx.app.request('/v1/runs/missing/events')).status).toBe(404);
  });

  it('cancels a queued run once, then refuses with 409; a cancelled run is not continuable', async () => {
    const { run_id } = await createRun();
    const cancel = await post(`/v1/runs/${run_id}/cancel`, {});
    expect(cancel.status).toBe(202);
    expect(await cancel.json()).toMatchObject({ run_id, status: 'CANCELLED' });
    const run = (await (await fx.app.request(`/v1/runs/${run_id}`)).json()) as RunView;
    expect(run.status).toBe('CANCELLED');

    const again = await post(`/v1/runs/${run_id}/cancel`, {});
    expect(again.status).toBe(409);
    expect(await again.json()).toMatchObject({ error: 'run_already_terminal' });

    const cont = await post(`/v1/runs/${run_id}/continue`, {});
    expect(cont.status).toBe(409);
    expect(await cont.json()).toMatchObject({ error: 'run_not_continuable' });
  });

  it('treats continue of a PENDING run as already queued', async () => {
    const { run_id } = await createRun();
    const res = await post(`/v1/runs/${run_id}/continue`, '');
    expect(res.status).toBe(202);
    expect(await res.json()).toMatchObject({ run_id, status: 'PENDING', action: 'already-queued' });
    const withInput = await post(`/v1/runs/${run_id}/continue`, { input: 'and also this' });
    expect(withInput.status).toBe(409);
    expect(await withInput.json()).toMatchObject({
      error: 'run_not_continuable',
      message: expect.stringContaining('has not started yet'),
    });
  });

  it('refuses to continue a COMPLETED run without fork (409) and forks it into a new run with fork', async () => {
    const { run_id } = await createRun();
    await fx.complete(run_id, 'the answer');
    const refused = await post(`/v1/runs/${run_id}/continue`, { input: 'more' });
    expect(refused.status).toBe(409);

    const noInput = await post(`/v1/runs/${run_id}/continue`, { fork: true });
    expect(noInput.status).toBe(400);
    expect(await noInput.json()).toMatchObject({
      error: 'invalid_request',
      message: expect.stringContaining('input'),
    });

    const forked = await post(`/v1/runs/${run_id}/continue`, { input: 'and then?', fork: true });
    expect(forked.status).toBe(202);
    const body = (await forked.json()) as { run_id: string; status: string; action: string };
    expect(body).toMatchObject({ action: 'fork', status: 'PENDING' });
    expect(body.run_id).not.toBe(run_id);
    const run = (await (await fx.app.request(`/v1/runs/${body.run_id}`)).json()) as RunView;
    expect(run.forked_from).toMatchObject({ run_id });
  });

  it('resumes an ERROR run in place with a job on the queue', async () => {
    const { run_id } = await createRun();
    await fx.queue.queue.obliterate({ force: true });
    await fx.fail(run_id);
    const res = await post(`/v1/runs/${run_id}/continue`, {});
    expect(res.status).toBe(202);
    expect(await res.json()).toMatchObject({ run_id, status: 'ERROR', action: 'resume' });
    const live = await fx.queue.liveJobFor(run_id);
    expect(live?.job.name).toBe('continue');
  });

  it('answers 400 naming the field for a bad continue body', async () => {
    const { run_id } = await createRun();
    const res = await post(`/v1/runs/${run_id}/continue`, { fork: 'yes' });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: 'invalid_body', issues: [{ path: 'fork' }] });
    const upgrade = await post(`/v1/runs/${run_id}/continue`, { upgrade: 'please' });
    expect(upgrade.status).toBe(400);
    expect(await upgrade.json()).toMatchObject({
      error: 'invalid_body',
      issues: [{ path: 'upgrade' }],
    });
  });

  it('stores continue { upgrade: true } with the resume of an ERROR run; refuses it on a queued run and with a fork', async () => {
    const { run_id } = await createRun();
    const queued = await post(`/v1/runs/${run_id}/continue`, { upgrade: true });
    expect(queued.status).toBe(409);
    expect(await queued.json()).toMatchObject({
      error: 'run_not_continuable',
      message: expect.stringContaining('nothing to upgrade'),
    });
    await fx.fail(run_id);
    const res = await post(`/v1/runs/${run_id}/continue`, { upgrade: true });
    expect(res.status).toBe(202);
    expect(await res.json()).toMatchObject({ run_id, status: 'ERROR', action: 'resume' });
    const run = (await fx.store.getRun(run_id))!;
    expect(await fx.store.readContinueRequest(run_id, run.waitingContinueRequestId!)).toMatchObject(
      { upgrade: true, input: null },
    );

    const done = await createRun();
    await fx.complete(done.run_id, 'the answer');
    const fork = await post(`/v1/runs/${done.run_id}/continue`, {
      input: 'more',
      fork: true,
      upgrade: true,
    });
    expect(fork.status).toBe(409);
    expect(await fork.json()).toMatchObject({ message: expect.stringContaining('drop upgrade') });
  });
});

describe('operations endpoints', () => {
  beforeEach(async () => {
    fx = await openProducerFixture();
  });

  it('serves /healthz, /readyz and Prometheus /metrics with queue counts', async () => {
    expect((await fx.app.request('/healthz')).status).toBe(200);
    const ready = await fx.app.request('/readyz');
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({
      status: 'ok',
      checks: { postgres: 'ok', [queueCheck()]: 'ok' },
    });

    await createRun();
    const metrics = await fx.app.request('/metrics');
    expect(metrics.status).toBe(200);
    const text = await metrics.text();
    expect(text).toContain(`cairn_queue_jobs{queue="${fx.queue.name}",state="waiting"} 1`);
    expect(text).toContain('cairn_runs_enqueued_total{kind="team",action="run"} 1');
    expect(text).toMatch(
      /cairn_http_requests_total\{method="POST",route="\/v1\/teams\/:name\/runs",status="202"\} 1/,
    );
  });

  it('answers /readyz 503 naming the dependency that failed, with its error when auth is off', async () => {
    await fx.close();
    fx = await openProducerFixture({
      healthChecks: { postgres: () => Promise.reject(new Error('connection refused')) },
    });
    const res = await fx.app.request('/readyz');
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({
      error: 'not_ready',
      message: 'not ready: postgres unavailable',
      checks: { postgres: 'unavailable', [queueCheck()]: 'ok' },
      details: { postgres: 'connection refused' },
    });
  });

  it('serves Bull Board at /admin/queues, listing the runs queue', async () => {
    await createRun();
    const page = await fx.app.request('/admin/queues');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect((await fx.app.request(`/admin/queues/queue/${fx.queue.name}`)).status).toBe(200);
    const slash = await fx.app.request('/admin/queues/');
    expect(slash.status).toBe(301);
    expect(slash.headers.get('location')).toMatch(/\/admin\/queues$/);
    const api = await fx.app.request('/admin/queues/api/queues');
    expect(api.status).toBe(200);
    const payload = (await api.json()) as {
      queues: { name: string; counts: Record<string, number> }[];
    };
    expect(payload.queues.map((q) => q.name)).toContain(fx.queue.name);
  });
});

describe('API keys', () => {
  beforeEach(async () => {
    fx = await openProducerFixture({ apiKeys: ['k-one', 'k-two-longer'] });
  });

  it('requires a bearer key everywhere but /healthz and /readyz, Bull Board included', async () => {
    expect((await fx.app.request('/readyz')).status).toBe(200);
    for (const path of [
      '/v1/runs/anything',
      '/admin/queues',
      '/admin/queues/api/queues',
      '/metrics',
    ]) {
      const res = await fx.app.request(path);
      expect(res.status, path).toBe(401);
      expect(res.headers.get('WWW-Authenticate')).toBe('Bearer');
      expect(await res.json()).toMatchObject({ error: 'unauthorized' });
    }
    const wrong = await fx.app.request('/admin/queues', {
      headers: { Authorization: 'Bearer k-on' },
    });
    expect(wrong.status).toBe(401);
    const post401 = await post(
      '/v1/teams/research-team/runs',
      { input: 'x' },
      { Authorization: 'Bearer nope' },
    );
    expect(post401.status).toBe(401);

    const ok = await fx.app.request('/admin/queues', {
      headers: { Authorization: 'Bearer k-two-longer' },
    });
    expect(ok.status).toBe(200);
    const created = await post(
      '/v1/teams/research-team/runs',
      { input: 'x' },
      { Authorization: 'Bearer k-one' },
    );
    expect(created.status).toBe(202);
    expect((await fx.app.request('/healthz')).status).toBe(200);
  });
});
