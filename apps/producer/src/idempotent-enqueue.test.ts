import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openProducerFixture, type ProducerFixture } from './test-support/producer-fixture.js';

let fx: ProducerFixture;

beforeEach(async () => {
  fx = await openProducerFixture({ apiKeys: ['admin-key', 'acme:acme-key', 'globex:globex-key'] });
});
afterEach(async () => {
  await fx.close();
});

async function createRun(
  body: unknown,
  { key, apiKey = 'admin-key' }: { key?: string; apiKey?: string } = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fx.app.request('/v1/agents/researcher/runs', {
    method: 'POST',
    body: JSON.stringify(body),
    headers: {
      'Content-Type': 'application/json',
      Authorization: `Bearer ${apiKey}`,
      ...(key !== undefined && { 'Idempotency-Key': key }),
    },
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** Jobs on the queue, by state: what the workers would pick up. */
async function jobCount(): Promise<number> {
  const counts = await fx.queue.queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
  return Object.values(counts).reduce((a, b) => a + b, 0);
}

async function runCount(): Promise<number> {
  const { count } = await fx.store.db
    .selectFrom('runs')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .executeTakeFirstOrThrow();
  return Number(count);
}

describe('POST .../runs with an Idempotency-Key', () => {
  it('returns the run the first request created (200), enqueuing nothing again', async () => {
    const body = { input: "Research 'cairns'", metadata: { order: 7 } };
    const first = await createRun(body, { key: 'order-7' });
    expect(first.status).toBe(202);
    const again = await createRun(body, { key: 'order-7' });
    expect(again).toEqual({ status: 200, body: first.body });
    expect(await jobCount()).toBe(1);
    expect(await runCount()).toBe(1);

    // object key order is not part of the request
    const reordered = await createRun(
      { metadata: { order: 7 }, input: "Research 'cairns'" },
      { key: 'order-7' },
    );
    expect(reordered.body.run_id).toBe(first.body.run_id);
  });

  it('answers 422 for the same key with a different body, creating nothing', async () => {
    const first = await createRun({ input: "Research 'a'" }, { key: 'k1' });
    const different = await createRun({ input: "Research 'b'" }, { key: 'k1' });
    expect(different.status).toBe(422);
    expect(different.body).toMatchObject({ error: 'idempotency_key_reused' });
    expect(String(different.body.message)).toContain(String(first.body.run_id));
    expect(await runCount()).toBe(1);
    expect(await jobCount()).toBe(1);
  });

  it('creates one run for concurrent identical requests', async () => {
    const body = { input: "Research 'concurrency'", session_id: 'sess-concurrent' };
    const answers = await Promise.all(
      Array.from({ length: 12 }, () => createRun(body, { key: 'burst' })),
    );
    const runIds = new Set(answers.map((a) => a.body.run_id));
    expect(runIds.size).toBe(1);
    expect(answers.filter((a) => a.status === 202)).toHaveLength(1);
    expect(answers.filter((a) => a.status === 200)).toHaveLength(11);
    expect(await runCount()).toBe(1);
    expect(await jobCount()).toBe(1);
  });

  it('keeps each tenant’s keys apart, and creates a new run for every request without a key', async () => {
    const body = { input: "Research 'tenants'" };
    const acme = await createRun(body, { key: 'same', apiKey: 'acme-key' });
    const globex = await createRun(body, { key: 'same', apiKey: 'globex-key' });
    expect(acme.status).toBe(202);
    expect(globex.status).toBe(202);
    expect(acme.body.run_id).not.toBe(globex.body.run_id);
    await createRun(body);
    await createRun(body);
    expect(await runCount()).toBe(4);
  });

  it('answers 400 naming the header for a blank or overlong key', async () => {
    for (const key of [' ', 'x'.repeat(256)]) {
      const res = await createRun({ input: "Research 'x'" }, { key });
      expect(res.status).toBe(400);
      expect(String(res.body.message)).toContain('Idempotency-Key');
    }
    expect(await runCount()).toBe(0);
  });
});
