import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunView } from '@cairn/store';
import { openProducerFixture, type ProducerFixture } from './test-support/producer-fixture.js';

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

async function call(
  method: string,
  path: string,
  apiKey: string,
  body?: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fx.app.request(path, {
    method,
    headers: { Authorization: `Bearer ${apiKey}`, ...(body !== undefined && { 'Content-Type': 'application/json' }) },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text && res.headers.get('content-type')?.includes('json') ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

async function createAs(apiKey: string, kind: 'agents' | 'teams', body: Record<string, unknown> = {}) {
  const name = kind === 'agents' ? 'researcher' : 'research-team';
  const res = await call('POST', `/v1/${kind}/${name}/runs`, apiKey, { input: "Research 'tenants'", ...body });
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
      ['POST', `/v1/runs/${acmeTeam.run_id}/decisions`, { decisions: [{ action_id: 'act-1', type: 'approve' }] }],
      ['GET', `/v1/sessions/${acmeTeam.session_id}`],
    ];
    for (const [method, path, body] of foreign) {
      const res = await call(method, path, GLOBEX, body);
      expect(res.status, `${method} ${path}`).toBe(404);
      // the same answer as for something that does not exist
      const missing = await call(method, path.replace(/runs\/[^/]+|sessions\/[^/]+/, (m) => `${m.split('/')[0]}/no-such-id`), GLOBEX, body);
      expect(missing.status, `${method} ${path} (missing)`).toBe(404);
      expect(res.body.error).toBe(missing.body.error);
    }
    expect((await call('GET', `/v1/runs/${globexRun.run_id}`, ACME)).status).toBe(404);

    // globex's cancel did nothing
    const view = (await call('GET', `/v1/runs/${acmeTeam.run_id}`, ACME)).body as unknown as RunView;
    expect(view.status).toBe('PENDING');
  });

  it("a tenant cannot add a run to another tenant's session (404, nothing created)", async () => {
    const acme = await createAs(ACME, 'agents');
    const res = await call('POST', '/v1/agents/researcher/runs', GLOBEX, { input: "Research 'x'", session_id: acme.session_id });
    expect(res.status).toBe(404);
    expect(res.body.error).toBe('session_not_found');
    const session = (await call('GET', `/v1/sessions/${acme.session_id}`, ACME)).body as { runs: unknown[] };
    expect(session.runs).toHaveLength(1);

    const own = await createAs(ACME, 'teams', { session_id: acme.session_id });
    expect(own.session_id).toBe(acme.session_id);
  });

  it('an unbound key is an admin: it sees every tenant’s runs and sessions; its runs are no tenant’s', async () => {
    const acme = await createAs(ACME, 'agents');
    const globex = await createAs(GLOBEX, 'teams');
    expect((await call('GET', `/v1/runs/${acme.run_id}`, ADMIN)).status).toBe(200);
    expect((await call('GET', `/v1/sessions/${globex.session_id}`, ADMIN)).status).toBe(200);
    expect((await call('POST', `/v1/runs/${acme.run_id}/cancel`, ADMIN, {})).status).toBe(202);

    const adminRun = await createAs(ADMIN, 'agents');
    expect((await call('GET', `/v1/runs/${adminRun.run_id}`, ACME)).status).toBe(404);
    expect((await fx.client.store.getRun(acme.run_id))?.tenantId).toBe('acme');
    expect((await fx.client.store.getRun(adminRun.run_id))?.tenantId).toBeNull();
  });

  it("member runs and forks belong to their run's tenant", async () => {
    const acme = await createAs(ACME, 'agents');
    await fx.complete(acme.run_id, 'done');
    const forked = await call('POST', `/v1/runs/${acme.run_id}/continue`, ACME, { fork: true, input: 'And more?' });
    expect(forked.status).toBe(202);
    const forkId = String(forked.body.run_id);
    expect(forkId).not.toBe(acme.run_id);
    expect((await call('GET', `/v1/runs/${forkId}`, ACME)).status).toBe(200);
    expect((await call('GET', `/v1/runs/${forkId}`, GLOBEX)).status).toBe(404);

    // a member run is created by the worker (no key): it takes its session's tenant
    const team = await createAs(ACME, 'teams');
    const member = await fx.client.store.createRun({
      entity: { kind: 'agent', name: 'researcher' },
      input: 'delegated',
      checkpoint: 'tool-batch',
      sessionId: team.session_id,
      parentRunId: team.run_id,
    });
    expect(member.tenantId).toBe('acme');
    expect((await call('GET', `/v1/runs/${member.runId}`, GLOBEX)).status).toBe(404);
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
