import { afterEach, expect, it } from 'vitest';
import { openProducerFixture, type ProducerFixture } from '../test-support/producer-fixture.js';

let fx: ProducerFixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

it("shows a tenant's key only its tenant's runs (and counts only them), hides Bull Board from it, and answers 404 for another tenant's run page", async () => {
  fx = await openProducerFixture({ apiKeys: ['acme:acme-key', 'globex:globex-key', 'admin-key'] });
  const app = fx.app;
  const as = (key: string) => ({ Authorization: `Bearer ${key}` });
  const create = async (key: string, input: string) => {
    const res = await app.request('/v1/teams/research-team/runs', {
      method: 'POST',
      headers: { ...as(key), 'Content-Type': 'application/json' },
      body: JSON.stringify({ input }),
    });
    expect(res.status).toBe(202);
    return ((await res.json()) as { run_id: string }).run_id;
  };
  const acmeRun = await create('acme-key', 'for acme');
  const globexRun = await create('globex-key', 'for globex');

  const acmeList = await (await app.request('/ui', { headers: as('acme-key') })).text();
  expect(acmeList).toContain(acmeRun);
  expect(acmeList).not.toContain(globexRun);
  expect(acmeList).not.toContain('href="/admin/queues"');
  const adminList = await (await app.request('/ui', { headers: as('admin-key') })).text();
  expect(adminList).toContain(acmeRun);
  expect(adminList).toContain(globexRun);
  expect(adminList).toContain('href="/admin/queues"');
  // The fleet overview counts the key's tenant's runs only: one PENDING run each, two for an admin.
  const pendingCount = (page: string) =>
    /data-overview="status-PENDING"><strong>(\d+)<\/strong>/.exec(page)?.[1];
  expect(pendingCount(acmeList)).toBe('1');
  expect(pendingCount(adminList)).toBe('2');

  expect((await app.request(`/ui/runs/${globexRun}`, { headers: as('acme-key') })).status).toBe(
    404,
  );
  expect((await app.request(`/ui/runs/${acmeRun}`, { headers: as('acme-key') })).status).toBe(200);
});
