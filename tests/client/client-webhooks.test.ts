import { afterEach, describe, expect, it } from 'vitest';
import { BadRequest, createClient, NotFound } from '@cairn/client';
import {
  openProducerFixture,
  type ProducerFixture,
} from '../../apps/producer/src/test-support/producer-fixture.js';

let fx: ProducerFixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

describe('@cairn/client webhooks', () => {
  it('creates (with its secret, once), lists, reads, updates, lists deliveries of and deletes an endpoint; bad input is a BadRequest naming the field', async () => {
    fx = await openProducerFixture({ apiKeys: ['admin-key', 'acme:acme-key'] });
    const app = fx.app;
    const acme = createClient({
      baseUrl: 'http://cairn.test',
      apiKey: 'acme-key',
      fetch: (input, init) => Promise.resolve(app.request(String(input), init)),
    });
    const created = await acme.webhooks.create({
      url: 'https://hooks.acme.example/cairn',
      events: ['run.paused'],
      entity: 'ops-agent',
    });
    expect(created).toMatchObject({ tenant: 'acme', entity: 'ops-agent', disabled: false });
    expect(created.secret).toMatch(/^whsec_/);
    const listed = await acme.webhooks.list();
    expect(listed).toEqual([expect.objectContaining({ endpoint_id: created.endpoint_id })]);
    expect(listed[0]).not.toHaveProperty('secret');
    expect(await acme.webhooks.get(created.endpoint_id)).not.toHaveProperty('secret');
    expect(await acme.webhooks.update(created.endpoint_id, { disabled: true })).toMatchObject({
      disabled: true,
    });
    expect(await acme.webhooks.deliveries(created.endpoint_id)).toEqual([]);
    await expect(acme.webhooks.redeliver(created.endpoint_id, 'msg_1')).rejects.toBeInstanceOf(
      NotFound,
    );
    const bad = await acme.webhooks
      .create({ url: 'gopher://x', events: ['run.paused'] })
      .catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(BadRequest);
    expect((bad as BadRequest).message).toContain('url');
    await acme.webhooks.delete(created.endpoint_id);
    await expect(acme.webhooks.get(created.endpoint_id)).rejects.toBeInstanceOf(NotFound);
  });
});
