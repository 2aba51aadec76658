import { afterEach, describe, expect, it } from 'vitest';
import { PostgresWebhookStore } from '@cairn/store';
import { createApp } from './app.js';
import { callApi } from './test-support/api-call.js';
import { openProducerFixture, type ProducerFixture } from './test-support/producer-fixture.js';

let fx: ProducerFixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

const ADMIN = 'admin-key';
const ACME = 'acme-key';
const GLOBEX = 'globex-key';

const call = callApi;

describe('/v1/webhooks', () => {
  it("creates an endpoint answering its secret once; a tenant key manages its own tenant's only; the secret never shows again", async () => {
    fx = await openProducerFixture({ apiKeys: [ADMIN, `acme:${ACME}`, `globex:${GLOBEX}`] });
    const app = (path: string, init?: RequestInit) => fx!.app.request(path, init);
    const created = await call(app, 'POST', '/v1/webhooks', ACME, {
      url: 'http://127.0.0.1:9/hook',
      events: ['run.paused', 'run.completed'],
      description: 'ops',
    });
    expect(created.status).toBe(201);
    const secret = created.body.secret as string;
    expect(secret).toMatch(/^whsec_/);
    expect(created.body).toMatchObject({
      tenant: 'acme',
      events: ['run.paused', 'run.completed'],
      disabled: false,
    });
    const id = created.body.endpoint_id as string;
    const path = `/v1/webhooks/${id}`;

    const answers = [
      await call(app, 'GET', '/v1/webhooks', ACME),
      await call(app, 'GET', '/v1/webhooks', ADMIN),
      await call(app, 'GET', path, ACME),
      await call(app, 'PATCH', path, ACME, { events: [], disabled: true }),
      await call(app, 'GET', `${path}/deliveries`, ACME),
    ];
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    for (const answer of answers) expect(answer.text).not.toContain(secret.slice(6));
    expect(answers[0]!.body.endpoints).toHaveLength(1);
    expect(answers[3]!.body).toMatchObject({ events: [], disabled: true });
    expect(answers[4]!.body).toEqual({ deliveries: [] });

    // Another tenant sees nothing of it; a tenant key cannot name another tenant.
    expect((await call(app, 'GET', '/v1/webhooks', GLOBEX)).body).toEqual({ endpoints: [] });
    for (const [method, p] of [
      ['GET', path],
      ['PATCH', path],
      ['DELETE', path],
      ['GET', `${path}/deliveries`],
    ] as const)
      expect(
        (await call(app, method, p, GLOBEX, method === 'PATCH' ? { disabled: false } : undefined))
          .status,
      ).toBe(404);
    const other = await call(app, 'POST', '/v1/webhooks', GLOBEX, {
      url: 'https://example.com/h',
      tenant: 'acme',
    });
    expect(other.status).toBe(403);
    expect((await call(app, 'POST', `${path}/deliveries/msg_1/redeliver`, ACME)).status).toBe(404);

    expect((await call(app, 'DELETE', path, ADMIN)).status).toBe(204);
    expect((await call(app, 'GET', path, ACME)).status).toBe(404);
  });

  it('refuses bad input with a 400 naming the field, and private, loopback and link-local targets unless allowed', async () => {
    fx = await openProducerFixture();
    const allowed = (path: string, init?: RequestInit) => fx!.app.request(path, init);
    const strict = createApp({
      client: fx.client,
      queues: [],
      webhooks: { webhooks: new PostgresWebhookStore(fx.store.db), allowPrivate: false },
    });
    const refusing = (path: string, init?: RequestInit) => strict.request(path, init);
    const cases: [unknown, string][] = [
      [{ url: 'ftp://example.com/h' }, 'url'],
      [{ url: 'not a url' }, 'url'],
      [{ url: 'https://user:pw@example.com/h' }, 'url'],
      [{ url: 'https://example.com/h', events: ['run.exploded'] }, 'events.0'],
      [{ url: 'https://example.com/h', colour: 'red' }, 'colour'],
      [{}, 'url'],
    ];
    for (const [body, field] of cases) {
      const answer = await call(allowed, 'POST', '/v1/webhooks', '', body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.body.issues, JSON.stringify(body)).toEqual(
        expect.arrayContaining([expect.objectContaining({ path: field })]),
      );
    }
    for (const url of [
      'http://127.0.0.1:8080/h',
      'http://localhost/h',
      'http://[::1]/h',
      'http://169.254.169.254/latest/meta-data',
      'http://10.1.2.3/h',
      'http://192.168.1.1/h',
      'http://[::ffff:127.0.0.1]/h',
    ]) {
      const answer = await call(refusing, 'POST', '/v1/webhooks', '', { url });
      expect(answer.status, url).toBe(400);
      expect(answer.body.issues, url).toEqual([expect.objectContaining({ path: 'url' })]);
      expect(answer.body.message, url).toContain('CAIRN_WEBHOOK_ALLOW_PRIVATE');
    }
    expect(
      (await call(allowed, 'POST', '/v1/webhooks', '', { url: 'http://127.0.0.1:8080/h' })).status,
    ).toBe(201);
    const created = await call(refusing, 'POST', '/v1/webhooks', '', {
      url: 'https://93.184.215.14/h',
    });
    expect(created.status).toBe(201);
    const patched = await call(
      refusing,
      'PATCH',
      `/v1/webhooks/${created.body.endpoint_id as string}`,
      '',
      {
        url: 'http://127.0.0.1/h',
      },
    );
    expect(patched.status).toBe(400);
  });
});
