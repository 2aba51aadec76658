import { PostgresWebhookStore } from '@cairn/store';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openProducerFixture, type ProducerFixture } from './test-support/producer-fixture.js';
import { callApi } from './test-support/api-call.js';

let fx: ProducerFixture;

const ADMIN = 'admin-key';
const ACME = 'acme-key';
const GLOBEX = 'globex-key';

beforeEach(async () => {
  fx = await openProducerFixture({ apiKeys: [ADMIN, `acme:${ACME}`, `globex:${GLOBEX}`] });
});
afterEach(async () => {
  await fx.close();
});

/** A request of the app in this test with `apiKey` (see callApi). */
function call(method: string, path: string, apiKey: string, body?: unknown) {
  return callApi((input, init) => fx.app.request(input, init), method, path, apiKey, body);
}

const VALID = {
  entity: { kind: 'agent', name: 'researcher' },
  input: "Research 'schedules'",
  every_ms: 60_000,
};

async function countSchedules(): Promise<number> {
  const listed = await call('GET', '/v1/schedules', ADMIN);
  return (listed.body.schedules as unknown[]).length;
}

/** The fields a 400's issues name. */
function namedFields(body: Record<string, unknown>): string[] {
  return (body.issues as { path: string }[]).map((i) => i.path);
}

describe('/v1/schedules: bad input is a 400 naming the field, and nothing is stored', () => {
  it.each([
    ['an invalid cron pattern', { cron: '61 * * * *' }, 'cron'],
    ['a cron pattern that is not one', { cron: 'every day' }, 'cron'],
    ['an unknown time zone', { cron: '0 9 * * *', timezone: 'Mars/Olympus' }, 'timezone'],
    ['an interval under the minimum', { every_ms: 999 }, 'every_ms'],
    ['an interval that is not an integer', { every_ms: 1500.5 }, 'every_ms'],
    ['both cron and every_ms', { cron: '* * * * *', every_ms: 5000 }, 'every_ms'],
    ['neither cron nor every_ms', {}, 'cron'],
    ['an unknown overlap policy', { every_ms: 5000, overlap: 'queue_all' }, 'overlap'],
    ['a bad run field (priority)', { every_ms: 5000, priority: 11 }, 'priority'],
  ])('%s', async (_what, timing, field) => {
    const { every_ms: _every, ...base } = VALID;
    const res = await call('POST', '/v1/schedules', ADMIN, { ...base, ...timing });
    expect(res.status).toBe(400);
    expect(namedFields(res.body)).toContain(field);
    expect(await countSchedules()).toBe(0);
  });

  it('an input longer than a run may take: 422 field_too_long, as for a run', async () => {
    const res = await call('POST', '/v1/schedules', ADMIN, {
      ...VALID,
      input: 'x'.repeat(100_001),
    });
    expect(res.status).toBe(422);
    expect(res.body.error).toBe('field_too_long');
    expect(await countSchedules()).toBe(0);
  });

  it('an entity no worker serves: 400 naming entity', async () => {
    const res = await call('POST', '/v1/schedules', ADMIN, {
      ...VALID,
      entity: { kind: 'agent', name: 'nobody' },
    });
    expect(res.status).toBe(400);
    expect(namedFields(res.body)).toEqual(['entity']);
    expect(await countSchedules()).toBe(0);
  });

  it('a PATCH with a bad interval changes nothing', async () => {
    const created = await call('POST', '/v1/schedules', ADMIN, VALID);
    const id = created.body.schedule_id as string;
    const res = await call('PATCH', `/v1/schedules/${id}`, ADMIN, { every_ms: 10 });
    expect(res.status).toBe(400);
    expect(namedFields(res.body)).toEqual(['every_ms']);
    expect((await call('GET', `/v1/schedules/${id}`, ADMIN)).body.every_ms).toBe(60_000);
  });
});

describe('/v1/schedules: create, read, update, delete', () => {
  it('a schedule lives in its tenant, with its next firings from the job scheduler', async () => {
    const created = await call('POST', '/v1/schedules', ACME, {
      ...VALID,
      cron: '0 9 * * 1-5',
      timezone: 'Europe/Paris',
      every_ms: undefined,
      metadata: { team: 'growth' },
      priority: 3,
      overlap: 'buffer_one',
    });
    expect(created.status).toBe(201);
    const id = created.body.schedule_id as string;
    expect(created.body).toMatchObject({
      entity: VALID.entity,
      cron: '0 9 * * 1-5',
      timezone: 'Europe/Paris',
      every_ms: null,
      overlap: 'buffer_one',
      paused: false,
      metadata: { team: 'growth' },
      priority: 3,
    });

    const got = await call('GET', `/v1/schedules/${id}`, ACME);
    expect(got.status).toBe(200);
    const next = got.body.next_fire_times as string[];
    expect(next).toHaveLength(5);
    for (const time of next) {
      // 9:00 in Paris is 07:00 or 08:00 UTC, Monday to Friday.
      const at = new Date(time);
      expect([7, 8]).toContain(at.getUTCHours());
      expect(at.getUTCMinutes()).toBe(0);
      expect([1, 2, 3, 4, 5]).toContain(at.getUTCDay());
    }
    expect(await fx.schedules.queue.next(id)).toBe(Date.parse(next[0]!));

    // Another tenant sees nothing of it; the admin sees it.
    expect((await call('GET', `/v1/schedules/${id}`, GLOBEX)).status).toBe(404);
    expect((await call('PATCH', `/v1/schedules/${id}`, GLOBEX, { paused: true })).status).toBe(404);
    expect((await call('DELETE', `/v1/schedules/${id}`, GLOBEX)).status).toBe(404);
    expect((await call('GET', '/v1/schedules', GLOBEX)).body.schedules).toEqual([]);
    expect((await call('GET', '/v1/schedules', ADMIN)).body.schedules).toHaveLength(1);

    // Paused: the scheduler is removed; resumed with an interval: upserted again.
    const paused = await call('PATCH', `/v1/schedules/${id}`, ACME, { paused: true });
    expect(paused.body.paused).toBe(true);
    expect(await fx.schedules.queue.next(id)).toBeUndefined();
    expect((await call('GET', `/v1/schedules/${id}`, ACME)).body.next_fire_times).toEqual([]);
    const resumed = await call('PATCH', `/v1/schedules/${id}`, ACME, {
      paused: false,
      every_ms: 3_600_000,
    });
    expect(resumed.body).toMatchObject({ paused: false, every_ms: 3_600_000, cron: null });
    expect(await fx.schedules.queue.next(id)).toBeGreaterThan(Date.now() - 1000);

    expect((await call('DELETE', `/v1/schedules/${id}`, ACME)).status).toBe(204);
    expect(await fx.schedules.queue.next(id)).toBeUndefined();
    expect((await call('GET', `/v1/schedules/${id}`, ACME)).status).toBe(404);
  });
});

describe('job schedulers lost with a Redis', () => {
  it('are made again at start for active schedules only, and a present one is left alone', async () => {
    const active = (await call('POST', '/v1/schedules', ADMIN, VALID)).body.schedule_id as string;
    const kept = (await call('POST', '/v1/schedules', ADMIN, { ...VALID, every_ms: 7_200_000 }))
      .body.schedule_id as string;
    const paused = (await call('POST', '/v1/schedules', ADMIN, { ...VALID, paused: true })).body
      .schedule_id as string;
    const keptNext = await fx.schedules.queue.next(kept);
    await fx.schedules.queue.remove(active);
    expect(await fx.schedules.service.restoreSchedulers()).toBe(1);
    expect(await fx.schedules.queue.next(active)).toBeGreaterThan(Date.now() - 1000);
    expect(await fx.schedules.queue.next(kept)).toBe(keptNext);
    expect(await fx.schedules.queue.next(paused)).toBeUndefined();
    expect(await fx.schedules.service.restoreSchedulers()).toBe(0);
  });
});

describe('firings', () => {
  async function scheduleWith(overlap: string): Promise<string> {
    const created = await call('POST', '/v1/schedules', ADMIN, {
      ...VALID,
      every_ms: 3_600_000,
      overlap,
    });
    expect(created.status).toBe(201);
    return created.body.schedule_id as string;
  }

  it('one firing delivered twice, at once and again later, starts one run that records its schedule', async () => {
    const id = await scheduleWith('allow');
    const at = new Date('2026-01-01T00:00:00.000Z');
    const [a, b] = await Promise.all([
      fx.schedules.service.fire(id, at),
      fx.schedules.service.fire(id, at),
    ]);
    const again = await fx.schedules.service.fire(id, at);
    expect(a.outcome).toBe('started');
    expect(b).toEqual(a);
    expect(again).toEqual(a);
    const runId = (a as { runId: string }).runId;
    const detail = await call('GET', `/v1/schedules/${id}`, ADMIN);
    expect(detail.body.recent_firings).toEqual([
      {
        fire_time: at.toISOString(),
        outcome: 'started',
        run_id: runId,
        run_status: 'PENDING',
        note: null,
      },
    ]);
    const { count } = await fx.store.db
      .selectFrom('runs')
      .select((eb) => eb.fn.countAll<string>().as('count'))
      .executeTakeFirstOrThrow();
    expect(Number(count)).toBe(1);
  });

  it('skip: a firing while the previous run is unfinished is recorded skipped, with its webhook event; after it ends, the next starts', async () => {
    await new PostgresWebhookStore(fx.store.db).createEndpoint({
      tenantId: null,
      url: 'https://hooks.example.com/cairn',
      events: ['schedule.run_skipped'],
    });
    const id = await scheduleWith('skip');
    const first = await fx.schedules.service.fire(id, new Date(3_600_000));
    expect(first.outcome).toBe('started');
    const firstRun = (first as { runId: string }).runId;
    const skipped = await fx.schedules.service.fire(id, new Date(7_200_000));
    expect(skipped).toEqual({
      outcome: 'skipped',
      note: `previous run ${firstRun} is PENDING`,
    });
    await fx.complete(firstRun, 'done');
    const third = await fx.schedules.service.fire(id, new Date(10_800_000));
    expect(third.outcome).toBe('started');
    const outcomes = (
      (await call('GET', `/v1/schedules/${id}`, ADMIN)).body.recent_firings as {
        outcome: string;
      }[]
    ).map((f) => f.outcome);
    expect(outcomes).toEqual(['started', 'skipped', 'started']);
    const events = await fx.store.db
      .selectFrom('webhook_events')
      .select(['type', 'payload'])
      .where('type', '=', 'schedule.run_skipped')
      .execute();
    expect(events.map((e) => e.payload)).toEqual([
      {
        schedule_id: id,
        fire_time: new Date(7_200_000).toISOString(),
        entity: VALID.entity,
        reason: `previous run ${firstRun} is PENDING`,
      },
    ]);
  });

  it('buffer_one: one firing waits for the previous run and starts once it ends; a second one is skipped', async () => {
    const id = await scheduleWith('buffer_one');
    const first = await fx.schedules.service.fire(id, new Date(3_600_000));
    const firstRun = (first as { runId: string }).runId;
    expect(await fx.schedules.service.fire(id, new Date(7_200_000))).toEqual({
      outcome: 'waiting',
    });
    expect((await fx.schedules.service.fire(id, new Date(10_800_000))).outcome).toBe('skipped');
    // Looking again while the run is unfinished: still waiting.
    expect(await fx.schedules.service.fire(id, new Date(7_200_000))).toEqual({
      outcome: 'waiting',
    });
    await fx.fail(firstRun);
    const buffered = await fx.schedules.service.fire(id, new Date(7_200_000));
    expect(buffered.outcome).toBe('started');
    expect((buffered as { runId: string }).runId).not.toBe(firstRun);
  });

  it('a firing whose run the API refuses (its entity no longer served) is recorded skipped, with the error', async () => {
    const id = await scheduleWith('allow');
    await fx.store.db
      .updateTable('schedules')
      .set({ entity_name: 'retired' })
      .where('schedule_id', '=', id)
      .execute();
    const result = await fx.schedules.service.fire(id, new Date(3_600_000));
    expect(result.outcome).toBe('skipped');
    expect((result as { note: string }).note).toMatch(/^the run was refused: .*retired/);
    const [firing] = (await call('GET', `/v1/schedules/${id}`, ADMIN)).body.recent_firings as {
      outcome: string;
      run_id: string | null;
    }[];
    expect(firing).toMatchObject({ outcome: 'skipped', run_id: null });
  });

  it('a paused schedule ignores its firings; a deleted one too, and its runs stay', async () => {
    const id = await scheduleWith('allow');
    const started = await fx.schedules.service.fire(id, new Date(3_600_000));
    await call('PATCH', `/v1/schedules/${id}`, ADMIN, { paused: true });
    expect(await fx.schedules.service.fire(id, new Date(7_200_000))).toEqual({
      outcome: 'ignored',
      why: 'schedule paused',
    });
    await call('DELETE', `/v1/schedules/${id}`, ADMIN);
    expect(await fx.schedules.service.fire(id, new Date(10_800_000))).toEqual({
      outcome: 'ignored',
      why: 'schedule deleted',
    });
    const runId = (started as { runId: string }).runId;
    expect((await call('GET', `/v1/runs/${runId}`, ADMIN)).status).toBe(200);
  });
});

describe('/ui/schedules pages', () => {
  it('list the key’s schedules; a schedule’s page shows its next and recent firings, its runs, and pauses it', async () => {
    const created = await call('POST', '/v1/schedules', ACME, { ...VALID, overlap: 'skip' });
    const id = created.body.schedule_id as string;
    const started = await fx.schedules.service.fire(id, new Date(3_600_000));
    await fx.schedules.service.fire(id, new Date(7_200_000));
    const page = (path: string, key: string, init: RequestInit = {}) =>
      fx.app.request(path, { ...init, headers: { Authorization: `Bearer ${key}` } });

    const list = await page('/ui/schedules', ACME);
    expect(list.status).toBe(200);
    expect(await list.text()).toContain(`data-schedule-id="${id}"`);
    expect(await (await page('/ui/schedules', GLOBEX)).text()).toContain('No schedules yet.');
    expect((await page(`/ui/schedules/${id}`, GLOBEX)).status).toBe(404);

    const html = await (await page(`/ui/schedules/${id}`, ACME)).text();
    expect(html).toContain('every 1 min');
    expect(html).toContain(`/ui/runs/${(started as { runId: string }).runId}`);
    expect(html).toContain('data-outcome="skipped"');
    expect(html.match(/<li><time/g)).toHaveLength(5);

    const paused = await page(`/ui/schedules/${id}/pause`, ACME, { method: 'POST' });
    expect(paused.status).toBe(303);
    expect(paused.headers.get('Location')).toBe(`/ui/schedules/${id}`);
    expect((await call('GET', `/v1/schedules/${id}`, ACME)).body.paused).toBe(true);
    const pausedPage = await (await page(`/ui/schedules/${id}`, ACME)).text();
    expect(pausedPage).toContain('id="schedule-resume"');
    expect(pausedPage).toContain('None: the schedule is paused.');
  });
});
