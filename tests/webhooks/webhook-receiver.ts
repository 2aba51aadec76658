import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** One request the receiver got. */
export interface ReceivedWebhook {
  id: string;
  timestamp: string;
  /** The parsed body when its signature verified with the endpoint's secret; undefined: it did not. */
  verified: { type: string; timestamp: string; data: Record<string, unknown> } | undefined;
  /** What the receiver answered. */
  status: number;
  /** When it arrived (ms since the epoch). */
  at: number;
}

/**
 * A webhook receiver on 127.0.0.1 for a test: verifies each request with the `standardwebhooks`
 * package, answers 500 to the first `failFirst` attempts of each message (`failFirstOf` its
 * type's, when it names one), and can go down (its
 * port refuses connections) and come back up on the same port.
 */
export class WebhookReceiver {
  readonly received: ReceivedWebhook[] = [];
  /** How many attempts of each message it answers 500 before it accepts one. */
  failFirst = 0;
  /** Per event type, how many attempts of each message of that type it answers 500 (instead of `failFirst`). */
  failFirstOf: Partial<Record<string, number>> = {};
  private secret = '';
  private server: Server | undefined;
  private port = 0;

  /** Starts listening (on the port it had, after {@link down}). */
  async up(): Promise<void> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const id = String(req.headers['webhook-id']);
        const earlier = this.received.filter((r) => r.id === id).length;
        const verified = this.verify(body, req.headers);
        const failFirst = (verified && this.failFirstOf[verified.type]) ?? this.failFirst;
        const status = earlier < failFirst ? 500 : 204;
        this.received.push({
          id,
          timestamp: String(req.headers['webhook-timestamp']),
          verified,
          status,
          at: Date.now(),
        });
        res.writeHead(status).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  /** Stops listening: attempts find the port closed. */
  async down(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }

  /** The URL to register. */
  get url(): string {
    return `http://127.0.0.1:${this.port}/hooks`;
  }

  /** The endpoint's secret, to verify with. */
  useSecret(secret: string): void {
    this.secret = secret;
  }

  /** The requests it accepted (2xx), verified. */
  accepted(): ReceivedWebhook[] {
    return this.received.filter((r) => r.status < 300 && r.verified);
  }

  /** The first accepted delivery of `type` for `runId`, if any. */
  acceptedFor(type: string, runId: string): ReceivedWebhook | undefined {
    return this.accepted().find(
      (r) => r.verified?.type === type && r.verified.data.run_id === runId,
    );
  }

  private verify(body: string, headers: IncomingHttpHeaders): ReceivedWebhook['verified'] {
    try {
      return new Webhook(this.secret).verify(
        body,
        headers as Record<string, string>,
      ) as ReceivedWebhook['verified'];
    } catch {
      return undefined;
    }
  }
}
