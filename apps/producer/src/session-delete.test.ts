import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openProducerFixture, type ProducerFixture } from './test-support/producer-fixture.js';

let fx: ProducerFixture;

beforeEach(async () => {
  fx = await openProducerFixture({ apiKeys: ['admin-key', 'acme:acme-key', 'globex:globex-key'] });
});
afterEach(async () => {
  await fx.close();
});

function request(method: string, path: string, apiKey: string, body?: unknown): Promise<Response> {
  return Promise.resolve(
    fx.app.request(path, {
      method,
      headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    }),
  );
}

async function createRun(
  apiKey: string,
  sessionId?: string,
): Promise<{ run_id: string; session_id: string }> {
  const res = await request('POST', '/v1/agents/researcher/runs', apiKey, {
    input: "Research 'x'",
    session_id: sessionId,
  });
  expect(res.status).toBe(202);
  return (await res.json()) as { run_id: string; session_id: string };
}

async function rowsOf(runIds: string[]): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of ['runs', 'run_messages', 'run_attempts', 'run_events']) {
    const { rows } = await sql<{
      n: number;
    }>`select count(*)::int as n from ${sql.table(table)} where run_id in (${sql.join(runIds)})`.execute(
      fx.store.db,
    );
    counts[table] = rows[0]!.n;
  }
  return counts;
}

describe('DELETE /v1/sessions/:session_id', () => {
  it('deletes the session and every run, message, attempt and event in it (204)', async () => {
    const first = await createRun('acme-key');
    const second = await createRun('acme-key', first.session_id);
    const other = await createRun('acme-key');
    await fx.complete(first.run_id, 'one');
    await fx.fail(second.run_id);
    await fx.store.appendEvents(first.run_id, [{ type: 'RunCompleted', data: {} }]);
    expect((await rowsOf([first.run_id, second.run_id])).run_messages).toBeGreaterThan(0);

    const res = await request('DELETE', `/v1/sessions/${first.session_id}`, 'acme-key');
    expect(res.status).toBe(204);
    expect(await res.text()).toBe('');
    expect(await rowsOf([first.run_id, second.run_id])).toEqual({
      runs: 0,
      run_messages: 0,
      run_attempts: 0,
      run_events: 0,
    });
    expect((await request('GET', `/v1/sessions/${first.session_id}`, 'acme-key')).status).toBe(404);
    expect((await request('GET', `/v1/runs/${first.run_id}`, 'acme-key')).status).toBe(404);
    expect((await request('DELETE', `/v1/sessions/${first.session_id}`, 'acme-key')).status).toBe(
      404,
    );
    // another session of the same tenant is untouched
    expect((await request('GET', `/v1/runs/${other.run_id}`, 'acme-key')).status).toBe(200);
  });

  it('refuses (409, nothing deleted) while a run of the session is unfinished', async () => {
    const run = await createRun('admin-key');
    const res = await request('DELETE', `/v1/sessions/${run.session_id}`, 'admin-key');
    expect(res.status).toBe(409);
    expect(await res.json()).toMatchObject({
      error: 'session_has_live_runs',
      message: expect.stringContaining(run.run_id),
    });
    expect((await rowsOf([run.run_id])).runs).toBe(1);
  });

  it("is 404 for another tenant's session, which stays; the same id deletes the asking tenant's own session alone", async () => {
    const run = await createRun('acme-key', 'user-alice');
    await fx.complete(run.run_id, 'done');
    expect((await request('DELETE', '/v1/sessions/user-alice', 'globex-key')).status).toBe(404);
    // an admin key's session of an id is the no-tenant one
    expect((await request('DELETE', '/v1/sessions/user-alice', 'admin-key')).status).toBe(404);
    expect((await rowsOf([run.run_id])).runs).toBe(1);

    const globex = await createRun('globex-key', 'user-alice');
    await fx.complete(globex.run_id, 'done');
    expect((await request('DELETE', '/v1/sessions/user-alice', 'globex-key')).status).toBe(204);
    expect(await rowsOf([globex.run_id])).toEqual({
      runs: 0,
      run_messages: 0,
      run_attempts: 0,
      run_events: 0,
    });
    expect((await rowsOf([run.run_id])).runs).toBe(1);
    expect((await request('DELETE', '/v1/sessions/user-alice', 'acme-key')).status).toBe(204);
  });
});
