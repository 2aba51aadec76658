import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { isPrivateAddress, PrivateAddressError, publicOnlyLookup } from '@cairn/runtime';
import type { WebhookDeliveryStore } from './webhook-ports.js';
import type { WebhookJobData } from './webhook-queue.js';

/** What one attempt needs besides its job. */
export interface DeliverWebhookOptions {
  store: Pick<WebhookDeliveryStore, 'deliveryTarget' | 'recordAttempt'>;
  /** How long the attempt may take, connection and answer. */
  timeoutMs: number;
  /** `CAIRN_WEBHOOK_ALLOW_PRIVATE`: private, loopback and link-local targets allowed. */
  allowPrivate: boolean;
  /** Told of each attempt made, once it is recorded: whether the receiver accepted it, and how long it took. */
  onAttempt?(attempt: { delivered: boolean; seconds: number }): void;
}

/** An attempt the receiver did not accept: retried by BullMQ until the job's attempts are spent. */
export class WebhookAttemptFailedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookAttemptFailedError';
  }
}

/** The most of a receiver's answer read (the rest is dropped with the connection). */
const MAX_ANSWER_BYTES = 64 * 1024;

/**
 * Makes attempt `attempt` of a delivery: signs the body per Standard Webhooks (`webhook-id`,
 * `webhook-timestamp` of this attempt, `webhook-signature`) with the endpoint's secret as it is
 * now, POSTs it without following redirects (a 3xx fails the attempt) and records the attempt.
 * A deleted or disabled endpoint ends the delivery quietly. Throws {@link WebhookAttemptFailedError}
 * when the receiver did not answer 2xx.
 */
export async function deliverWebhook(
  data: WebhookJobData,
  attempt: number,
  options: DeliverWebhookOptions,
): Promise<void> {
  const target = await options.store.deliveryTarget(data.endpointId);
  if (!target || target.disabled) return;
  const now = new Date();
  const signature = new Webhook(target.secret).sign(data.messageId, now, data.body);
  const timestamp = Math.floor(now.getTime() / 1000);
  const started = performance.now();
  let statusCode: number | null = null;
  let error: string | null = null;
  try {
    statusCode = await post(target.url, data, { timestamp, signature }, options);
    if (statusCode >= 300 && statusCode < 400)
      error = `HTTP ${statusCode}: redirects are not followed`;
    else if (statusCode < 200 || statusCode >= 300) error = `HTTP ${statusCode}`;
  } catch (cause) {
    error = describe(cause, options.timeoutMs);
  }
  const latencyMs = performance.now() - started;
  await options.store.recordAttempt({
    endpointId: data.endpointId,
    messageId: data.messageId,
    eventType: data.type,
    attempt,
    statusCode,
    latencyMs,
    error,
  });
  options.onAttempt?.({ delivered: error === null, seconds: latencyMs / 1000 });
  if (error !== null) throw new WebhookAttemptFailedError(error);
}

function describe(cause: unknown, timeoutMs: number): string {
  if (cause instanceof Error && (cause.name === 'TimeoutError' || cause.name === 'AbortError'))
    return `no answer within ${timeoutMs} ms`;
  return cause instanceof Error ? cause.message : String(cause);
}

/** POSTs the signed body; resolves with the answer's status. */
function post(
  rawUrl: string,
  data: WebhookJobData,
  signed: { timestamp: number; signature: string },
  options: DeliverWebhookOptions,
): Promise<number> {
  const url = new URL(rawUrl);
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  // A literal address is never looked up: it is checked here.
  if (!options.allowPrivate && isIP(host) !== 0 && isPrivateAddress(host))
    return Promise.reject(new PrivateAddressError(host, host));
  const request = url.protocol === 'https:' ? https.request : http.request;
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'Cairn-Webhooks/1',
          'webhook-id': data.messageId,
          'webhook-timestamp': String(signed.timestamp),
          'webhook-signature': signed.signature,
        },
        signal: AbortSignal.timeout(options.timeoutMs),
        ...(!options.allowPrivate && { lookup: publicOnlyLookup }),
      },
      (res) => {
        let read = 0;
        res.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > MAX_ANSWER_BYTES) res.destroy();
        });
        res.on('close', () => resolve(res.statusCode ?? 0));
        res.on('error', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(data.body);
  });
}
