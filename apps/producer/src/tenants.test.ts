import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Engine } from '@cairn/engine';
import { createRegistry } from '@cairn/research-team';
import type { RunView } from '@cairn/store';
import { openProducerFixture, type ProducerFixture } from './test-support/producer-fixture.js';
import { callApi } from './test-support/api-call.js';

// The team a test runs in-process: fast tools and scripted turns.
process.env.RESEARCH_TOOL_DELAY_MS = '10';
process.env.RESEARCH_MODEL_LATENCY_MS = '0';

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

async function createAs(
  apiKey: string,
  kind: 'agents' | 'teams',
  body: Record<string, unknown> = {},
) {
  const name = kind === 'agents' ? 'researcher' : 'research-team';
  const res = await call('POST', `/v1/${kind}/${name}/runs`, apiKey, {
    input: "Research 'tenants'",
    ...body,
  });
  expect(res.status).toBe(202);
  return res.body as { run_id: string; session_id: string };
}

describe('tenants', () => {
  it("a tenant reads only its own runs and sessions; another tenant's are 404 on every route, and nothing changes", async () => {
    const acmeTeam = await createAs(ACME, 'teams');
    const acmeAgent = await createAs(ACME, 'agents');
    const globexRun = await createAs(GLOBEX, 'agents');

    expect((await call('GET', `/v1/runs/${acmeTeam.run_id}`, ACME)).status).toBe(200);
    expect((await call('GET', `/v1/runs/${acmeAgent.run_id}`, ACME)).status).toBe(200);
    expect((await call('GET', `/v1/sessions/${acmeTeam.session_id}`, ACME)).status).toBe(200);

    const foreign: [string, string, unknown?][] = [
      ['GET', `/v1/runs/${acmeTeam.run_id}`],
      ['GET', `/v1/runs/${acmeTeam.run_id}/events`],
      ['POST', `/v1/runs/${acmeTeam.run_id}/continue`, {}],
      ['POST', `/v1/runs/${acmeTeam.run_id}/cancel`, {}],
      [
        'POST',
        `/v1/runs/${acmeTeam.run_id}/decisions`,
        { decisions: [{ action_id: 'act-1', type: 'approve' }] },
      ],
      ['GET', `/v1/sessions/${acmeTeam.session_id}`],
    ];
    for (const [method, path, body] of foreign) {
      const res = await call(method, path, GLOBEX, body);
      expect(res.status, `${method} ${path}`).toBe(404);
      // the same answer as for something that does not exist
      const missing = await call(
        method,
        path.replace(/runs\/[^/]+|sessions\/[^/]+/, (m) => `${m.split('/')[0]}/no-such-id`),
        GLOBEX,
        body,
      );
      expect(missing.status, `${method} ${path} (missing)`).toBe(404);
      expect(res.body.error).toBe(missing.body.error);
    }
    expect((await call('GET', `/v1/runs/${globexRun.run_id}`, ACME)).status).toBe(404);

    // globex's cancel did nothing
    const view = (await call('GET', `/v1/runs/${acmeTeam.run_id}`, ACME))
      .body as unknown as RunView;
    expect(view.status).toBe('PENDING');
  });

  it('the same session id in two tenants is two sessions: each creates, reads and deletes its own', async () => {
    // globex takes a predictable id first; acme may still use it, and learns nothing of globex's
    const globex = await createAs(GLOBEX, 'agents', { session_id: 'user-alice' });
    const acme = await createAs(ACME, 'agents', { session_id: 'user-alice' });
    const acmeTeam = await createAs(ACME, 'teams', { session_id: 'user-alice' });
    expect([globex.session_id, acme.session_id, acmeTeam.session_id]).toEqual([
      'user-alice',
      'user-alice',
      'user-alice',
    ]);

    const runIdsOf = async (apiKey: string) => {
      const res = await call('GET', '/v1/sessions/user-alice', apiKey);
      expect(res.status).toBe(200);
      return (res.body.runs as { run_id: string }[]).map((r) => r.run_id);
    };
    expect(await runIdsOf(ACME)).toEqual([acme.run_id, acmeTeam.run_id]);
    expect(await runIdsOf(GLOBEX)).toEqual([globex.run_id]);
    expect((await call('GET', `/v1/runs/${acme.run_id}`, GLOBEX)).status).toBe(404);

    await fx.complete(globex.run_id, 'done');
    expect((await call('DELETE', '/v1/sessions/user-alice', GLOBEX)).status).toBe(204);
    expect((await call('GET', '/v1/sessions/user-alice', GLOBEX)).status).toBe(404);
    expect(await runIdsOf(ACME)).toEqual([acme.run_id, acmeTeam.run_id]);
    // acme's unfinished runs refuse acme's delete; globex's delete did not see them
    const refused = await call('DELETE', '/v1/sessions/user-alice', ACME);
    expect(refused.status).toBe(409);
    expect(String(refused.body.message)).not.toContain(globex.run_id);
  });

  it("a full session of one tenant does not limit another tenant's session of the same id, and no answer names it", async () => {
    await fx.close();
    fx = await openProducerFixture({
      apiKeys: [ADMIN, `acme:${ACME}`, `globex:${GLOBEX}`],
      limits: { maxRunsPerSession: 2 },
    });
    const first = await createAs(GLOBEX, 'agents', { session_id: 'shared' });
    await createAs(GLOBEX, 'agents', { session_id: 'shared' });
    expect(
      (
        await call('POST', '/v1/agents/researcher/runs', GLOBEX, {
          input: 'x',
          session_id: 'shared',
        })
      ).status,
    ).toBe(429);
    await fx.complete(first.run_id, 'done');
    expect(
      (
        await call('POST', `/v1/runs/${first.run_id}/continue`, GLOBEX, {
          fork: true,
          input: 'more',
        })
      ).status,
    ).toBe(429);

    // acme's session `shared` is empty: globex's count is nowhere in acme's answers
    const acme = await createAs(ACME, 'agents', { session_id: 'shared' });
    await fx.complete(acme.run_id, 'done');
    const fork = await call('POST', `/v1/runs/${acme.run_id}/continue`, ACME, {
      fork: true,
      input: 'more',
    });
    expect(fork.status).toBe(202);
    const full = await call('POST', '/v1/agents/researcher/runs', ACME, {
      input: 'x',
      session_id: 'shared',
    });
    expect(full.status).toBe(429);
    expect(full.body).toMatchObject({
      error: 'too_many_runs',
      message: 'session shared already has 2 runs, the most a session may hold',
    });
    const session = await call('GET', '/v1/sessions/shared', ACME);
    expect((session.body.runs as { run_id: string }[]).map((r) => r.run_id)).toEqual([
      acme.run_id,
      String(fork.body.run_id),
    ]);
  });

  it('an unbound key is an admin: it sees every tenant’s runs; its runs and sessions are no tenant’s', async () => {
    const acme = await createAs(ACME, 'agents', { session_id: 'ops' });
    const globex = await createAs(GLOBEX, 'teams');
    expect((await call('GET', `/v1/runs/${acme.run_id}`, ADMIN)).status).toBe(200);
    expect((await call('GET', `/v1/runs/${globex.run_id}`, ADMIN)).status).toBe(200);
    expect((await call('POST', `/v1/runs/${acme.run_id}/cancel`, ADMIN, {})).status).toBe(202);

    // a session id names the admin's own (no tenant's) session: a tenant's session of that id is not in its answers
    expect((await call('GET', `/v1/sessions/${globex.session_id}`, ADMIN)).status).toBe(404);
    const adminRun = await createAs(ADMIN, 'agents', { session_id: 'ops' });
    const adminSession = await call('GET', '/v1/sessions/ops', ADMIN);
    expect((adminSession.body.runs as { run_id: string }[]).map((r) => r.run_id)).toEqual([
      adminRun.run_id,
    ]);
    const acmeSession = await call('GET', '/v1/sessions/ops', ACME);
    expect((acmeSession.body.runs as { run_id: string }[]).map((r) => r.run_id)).toEqual([
      acme.run_id,
    ]);

    expect((await call('GET', `/v1/runs/${adminRun.run_id}`, ACME)).status).toBe(404);
    expect((await fx.store.getRun(acme.run_id))?.tenantId).toBe('acme');
    expect((await fx.store.getRun(adminRun.run_id))?.tenantId).toBeNull();
  });

  it("member runs and forks belong to their run's tenant", async () => {
    const acme = await createAs(ACME, 'agents');
    await fx.complete(acme.run_id, 'done');
    const forked = await call('POST', `/v1/runs/${acme.run_id}/continue`, ACME, {
      fork: true,
      input: 'And more?',
    });
    expect(forked.status).toBe(202);
    const forkId = String(forked.body.run_id);
    expect(forkId).not.toBe(acme.run_id);
    expect((await call('GET', `/v1/runs/${forkId}`, ACME)).status).toBe(200);
    expect((await call('GET', `/v1/runs/${forkId}`, GLOBEX)).status).toBe(404);

    // the fork joins its source's session: acme's, not a no-tenant session of the same id
    const session = await call('GET', `/v1/sessions/${acme.session_id}`, ACME);
    expect((session.body.runs as { run_id: string }[]).map((r) => r.run_id)).toEqual([
      acme.run_id,
      forkId,
    ]);
    expect((await call('GET', `/v1/sessions/${acme.session_id}`, ADMIN)).status).toBe(404);

    // member runs are created by the worker (no key): they take their team's tenant and session
    const team = await createAs(ACME, 'teams', { checkpoint: 'tool-batch' });
    const worker = new Engine({
      store: fx.store,
      registry: createRegistry(),
      workerId: 'tenants-test',
    });
    const result = await worker.execute(team.run_id, { reason: 'run' });
    expect(result.outcome === 'finished' && result.run.status).toBe('COMPLETED');
    const members = await fx.store.listChildRuns(team.run_id);
    expect(members.length).toBeGreaterThan(0);
    for (const member of members) {
      expect(member.tenantId).toBe('acme');
      expect(member.sessionId).toBe(team.session_id);
      expect((await call('GET', `/v1/runs/${member.runId}`, ACME)).status).toBe(200);
      expect((await call('GET', `/v1/runs/${member.runId}`, GLOBEX)).status).toBe(404);
    }
  });

  it("the run pages list only the tenant's runs, and another tenant's run page is 404", async () => {
    const acme = await createAs(ACME, 'agents');
    const globex = await createAs(GLOBEX, 'agents');
    const page = async (path: string, apiKey: string) => {
      const res = await fx.app.request(path, { headers: { Authorization: `Bearer ${apiKey}` } });
      return { status: res.status, text: await res.text() };
    };
    const acmeList = await page('/ui', ACME);
    expect(acmeList.status).toBe(200);
    expect(acmeList.text).toContain(acme.run_id);
    expect(acmeList.text).not.toContain(globex.run_id);
    const adminList = await page('/ui', ADMIN);
    expect(adminList.text).toContain(acme.run_id);
    expect(adminList.text).toContain(globex.run_id);
    expect((await page(`/ui/runs/${acme.run_id}`, ACME)).status).toBe(200);
    expect((await page(`/ui/runs/${acme.run_id}`, GLOBEX)).status).toBe(404);
  });

  it('Bull Board is for admin keys only', async () => {
    await createAs(ACME, 'agents');
    for (const path of ['/admin/queues', '/admin/queues/api/queues']) {
      const tenant = await call('GET', path, ACME);
      expect(tenant.status, path).toBe(403);
      expect(String(tenant.body.message)).toContain('admin key');
      expect((await call('GET', path, ADMIN)).status, path).toBe(200);
    }
    const action = await call('PUT', `/admin/queues/api/queues/${fx.queue.name}/pause`, GLOBEX);
    expect(action.status).toBe(403);
    expect(await fx.queue.queue.isPaused()).toBe(false);
  });
});
