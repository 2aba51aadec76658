import { afterEach, describe, expect, it } from 'vitest';
import { PostgresWebhookStore } from '@cairn/store';
import { openProducerFixture, type ProducerFixture } from '../test-support/producer-fixture.js';

let fx: ProducerFixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

const ADMIN = 'admin-key';
const ACME = 'acme-key';
const GLOBEX = 'globex-key';

/** Signs in at /ui/login with `key`; returns the session's Cookie header. */
async function signIn(key: string): Promise<string> {
  const res = await fx!.app.request('/ui/login', {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ key, next: '/ui' }).toString(),
  });
  expect(res.status).toBe(303);
  return res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
}

describe('/ui/webhooks', () => {
  it("shows a tenant's endpoints with their last attempts, never a secret; Redeliver needs the session's CSRF token", async () => {
    fx = await openProducerFixture({ apiKeys: [ADMIN, `acme:${ACME}`, `globex:${GLOBEX}`] });
    const webhooks = new PostgresWebhookStore(fx.store.db);
    const { endpoint, secret } = await webhooks.createEndpoint({
      tenantId: 'acme',
      url: 'https://hooks.acme.example/cairn',
      events: ['run.paused'],
    });
    await webhooks.createEndpoint({
      tenantId: 'globex',
      url: 'https://globex.example/h',
      events: [],
    });
    const eventId = (
      await fx.store.db
        .insertInto('webhook_events')
        .values({
          tenant_key: 'acme',
          type: 'run.paused',
          run_id: null,
          entity_name: null,
          payload: '{}',
          endpoint_id: null,
          message_id: null,
        })
        .returning('event_id')
        .executeTakeFirstOrThrow()
    ).event_id;
    const deliveryId = `msg_${eventId}`;
    await webhooks.recordAttempt({
      endpointId: endpoint.endpoint_id,
      messageId: deliveryId,
      eventType: 'run.paused',
      attempt: 1,
      statusCode: 503,
      latencyMs: 41,
      error: 'HTTP 503',
    });

    const cookie = await signIn(ACME);
    const page = await fx.app.request('/ui/webhooks', { headers: { Cookie: cookie } });
    expect(page.status).toBe(200);
    const text = await page.text();
    expect(text).toContain('https://hooks.acme.example/cairn');
    expect(text).toContain(deliveryId);
    expect(text).toContain('HTTP 503');
    expect(text).not.toContain('globex.example');
    expect(text).not.toContain(secret.slice(6));
    const csrf = /name="csrf-token" content="([^"]+)"/.exec(text)?.[1];
    expect(csrf).toBeTruthy();

    const redeliver = `/ui/webhooks/${endpoint.endpoint_id}/deliveries/${deliveryId}/redeliver`;
    const post = (form: Record<string, string>) =>
      fx!.app.request(redeliver, {
        method: 'POST',
        headers: { Cookie: cookie, 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(form).toString(),
      });
    const pending = () =>
      fx!.store.db
        .selectFrom('webhook_events')
        .select('message_id')
        .where('endpoint_id', '=', endpoint.endpoint_id)
        .execute();
    expect((await post({ _csrf: 'not-the-token' })).status).toBe(403);
    expect(await pending()).toEqual([]);
    const done = await post({ _csrf: csrf! });
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toBe(`/ui/webhooks?redelivered=${deliveryId}`);
    expect(await pending()).toEqual([{ message_id: deliveryId }]);

    // Another tenant's session cannot redeliver it: the endpoint is not found for it.
    const globex = await signIn(GLOBEX);
    const globexPage = await (
      await fx.app.request('/ui/webhooks', { headers: { Cookie: globex } })
    ).text();
    expect(globexPage).not.toContain('hooks.acme.example');
    const globexCsrf = /name="csrf-token" content="([^"]+)"/.exec(globexPage)![1]!;
    const refused = await fx.app.request(redeliver, {
      method: 'POST',
      headers: { Cookie: globex, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: globexCsrf }).toString(),
    });
    expect(refused.status).toBe(404);
  });
});
