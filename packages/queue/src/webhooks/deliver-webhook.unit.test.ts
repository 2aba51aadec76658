import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { deliverWebhook, WebhookAttemptFailedError } from './deliver-webhook.js';
import type { WebhookDeliveryStore } from './webhook-ports.js';

const SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

/** A receiver answering `status` (with `location` on a redirect); resolves with its port and what it got. */
async function receiver(status: number) {
  const got: { headers: Record<string, string>; body: string }[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      got.push({ headers: req.headers as Record<string, string>, body });
      res
        .writeHead(status, status >= 300 && status < 400 ? { location: 'http://127.0.0.1:1/' } : {})
        .end();
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { port: (server.address() as AddressInfo).port, got };
}

/** The delivery store port over one endpoint, keeping the attempts it records. */
function storeFor(url: string) {
  const attempts: Parameters<WebhookDeliveryStore['recordAttempt']>[0][] = [];
  const store: Pick<WebhookDeliveryStore, 'deliveryTarget' | 'recordAttempt'> = {
    deliveryTarget: () => Promise.resolve({ url, secret: SECRET, disabled: false }),
    recordAttempt: (a) => Promise.resolve(void attempts.push(a)),
  };
  return { store, attempts };
}

const job = {
  endpointId: 'ep_1',
  messageId: 'msg_7',
  type: 'run.completed',
  body: '{"type":"run.completed"}',
};

describe('deliverWebhook', () => {
  it('signs per Standard Webhooks and records a 2xx attempt', async () => {
    const { port, got } = await receiver(204);
    const { store, attempts } = storeFor(`http://127.0.0.1:${port}/h`);
    await deliverWebhook(job, 1, { store, timeoutMs: 5000, allowPrivate: true });
    expect(new Webhook(SECRET).verify(got[0]!.body, got[0]!.headers)).toEqual({
      type: 'run.completed',
    });
    expect(got[0]!.headers['webhook-id']).toBe('msg_7');
    expect(attempts).toMatchObject([
      { attempt: 1, statusCode: 204, error: null, messageId: 'msg_7' },
    ]);
  });

  it('does not follow a redirect: a 3xx is a failed attempt', async () => {
    const { port, got } = await receiver(302);
    const { store, attempts } = storeFor(`http://127.0.0.1:${port}/h`);
    await expect(
      deliverWebhook(job, 2, { store, timeoutMs: 5000, allowPrivate: true }),
    ).rejects.toBeInstanceOf(WebhookAttemptFailedError);
    expect(got).toHaveLength(1);
    expect(attempts).toMatchObject([
      { attempt: 2, statusCode: 302, error: 'HTTP 302: redirects are not followed' },
    ]);
  });

  it('refuses a loopback target, by address or by a name resolving to one, unless private targets are allowed', async () => {
    const { port, got } = await receiver(204);
    for (const host of ['127.0.0.1', 'localhost', '[::ffff:127.0.0.1]']) {
      const { store, attempts } = storeFor(`http://${host}:${port}/h`);
      await expect(
        deliverWebhook(job, 1, { store, timeoutMs: 5000, allowPrivate: false }),
      ).rejects.toThrow(/private, loopback or link-local/);
      expect(attempts, host).toMatchObject([
        { statusCode: null, error: expect.stringContaining('CAIRN_WEBHOOK_ALLOW_PRIVATE') },
      ]);
    }
    expect(got).toEqual([]);
  });
});
