import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunView } from '@cairn/store';
import { openProducerFixture, type ProducerFixture } from './test-support/producer-fixture.js';

let fx: ProducerFixture;
beforeEach(async () => {
  fx = await openProducerFixture();
});
afterEach(async () => {
  await fx.close();
});

function post(path: string, body: unknown): Promise<Response> {
  return Promise.resolve(
    fx.app.request(path, {
      method: 'POST',
      body: typeof body === 'string' ? body : JSON.stringify(body),
      headers: { 'Content-Type': 'application/json' },
    }),
  );
}

async function view(runId: string): Promise<RunView> {
  return (await (await fx.app.request(`/v1/runs/${runId}`)).json()) as RunView;
}

interface BadBody {
  error: string;
  message: string;
  issues: { path: string }[];
}

const BAD_DEADLINES: [string, unknown][] = [
  ['negative', -1000],
  ['zero', 0],
  ['not an integer', 1.5],
  ['a numeric string', '5000'],
  ['not numeric', 'soon'],
  ['null', null],
  ['over 365 days', 366 * 24 * 60 * 60 * 1000],
];

describe('deadline_ms over HTTP', () => {
  it.each(BAD_DEADLINES)(
    'answers 400 naming deadline_ms for a %s deadline on create, and writes nothing',
    async (_label, deadline) => {
      const res = await post('/v1/agents/researcher/runs', { input: 'x', deadline_ms: deadline });
      expect(res.status).toBe(400);
      const payload = (await res.json()) as BadBody;
      expect(payload.error).toBe('invalid_body');
      expect(payload.issues.map((i) => i.path)).toEqual(['deadline_ms']);
      expect(payload.message).toContain('deadline_ms');
      expect((await fx.client.listRuns({ limit: 10 })).runs).toEqual([]);
      const jobs = await fx.queue.queue.getJobCounts();
      expect(Object.values(jobs).reduce((a, b) => a + b, 0)).toBe(0);
    },
  );

  it('creates a run whose deadline_at is deadline_ms after its creation', async () => {
    const res = await post('/v1/teams/research-team/runs', { input: 'x', deadline_ms: 45_000 });
    expect(res.status).toBe(202);
    const { run_id } = (await res.json()) as { run_id: string };
    const run = await view(run_id);
    expect(Date.parse(run.deadline_at!) - Date.parse(run.created_at)).toBe(45_000);
    const free = (await (await post('/v1/agents/researcher/runs', { input: 'y' })).json()) as {
      run_id: string;
    };
    expect((await view(free.run_id)).deadline_at).toBeNull();
  });

  it('answers 400 naming deadline_ms for a bad continue deadline, leaving the run as it was', async () => {
    const created = await post('/v1/agents/researcher/runs', { input: 'x', deadline_ms: 1 });
    const { run_id } = (await created.json()) as { run_id: string };
    await fx.fail(run_id);
    const before = await view(run_id);
    for (const [, deadline] of BAD_DEADLINES) {
      const res = await post(`/v1/runs/${run_id}/continue`, { deadline_ms: deadline });
      expect(res.status).toBe(400);
      expect(((await res.json()) as BadBody).issues.map((i) => i.path)).toEqual(['deadline_ms']);
    }
    expect(await view(run_id)).toEqual(before);
  });

  it('refuses to resume a run past its deadline without deadline_ms (409 naming it); with one it resumes with a deadline counted from the continue', async () => {
    const created = await post('/v1/agents/researcher/runs', { input: 'x', deadline_ms: 1 });
    const { run_id } = (await created.json()) as { run_id: string };
    await fx.queue.queue.obliterate({ force: true });
    await fx.fail(run_id);

    const refused = await post(`/v1/runs/${run_id}/continue`, { input: 'go on' });
    expect(refused.status).toBe(409);
    expect(((await refused.json()) as { message: string }).message).toMatch(
      /deadline passed at .*continue with deadline_ms/,
    );
    expect(await fx.queue.liveJobFor(run_id)).toBeUndefined();

    const startedAt = Date.now();
    const resumed = await post(`/v1/runs/${run_id}/continue`, {
      input: 'go on',
      deadline_ms: 600_000,
    });
    expect(resumed.status).toBe(202);
    expect(await resumed.json()).toMatchObject({ run_id, action: 'resume' });
    expect(Date.parse((await view(run_id)).deadline_at!)).toBeGreaterThanOrEqual(
      startedAt + 600_000 - 1000,
    );
    expect((await fx.queue.liveJobFor(run_id))?.job.name).toBe('continue');
  });
});
