import { createClient, TooManyRequests } from '@cairn/client';
import { afterEach, describe, expect, it } from 'vitest';
import {
  openProducerFixture,
  type ProducerFixture,
} from '../../apps/producer/src/test-support/producer-fixture.js';
import { serveApp, type ServedApp } from '../security/http-client.js';

const KEY = 'client-stream-cap-key';

describe('@cairn/client when its key holds as many event streams as the producer allows', () => {
  let fx: ProducerFixture | undefined;
  let api: ServedApp | undefined;
  afterEach(async () => {
    await api?.close();
    await fx?.close();
    api = fx = undefined;
  });

  it("waits out the 429 (Retry-After) and follows the run once a slot frees, instead of failing the app's wait", async () => {
    fx = await openProducerFixture({ apiKeys: [KEY], events: { maxStreamsPerKey: 1 } });
    api = await serveApp(fx.app);
    const cairn = createClient({ baseUrl: `http://127.0.0.1:${api.port}`, apiKey: KEY });
    const { run_id: runId } = await cairn.runs.create({
      kind: 'team',
      name: 'research-team',
      input: 'Research cairns',
    });

    // Another part of the app holds the key's only slot.
    const holder = new AbortController();
    const held = await fetch(`http://127.0.0.1:${api.port}/v1/runs/${runId}/events`, {
      headers: { Authorization: `Bearer ${KEY}` },
      signal: holder.signal,
    });
    expect(held.status).toBe(200);
    const refused = await fetch(`http://127.0.0.1:${api.port}/v1/runs/${runId}/events`, {
      headers: { Authorization: `Bearer ${KEY}` },
    });
    expect(refused.status).toBe(429);
    const retryAfterS = Number(refused.headers.get('Retry-After'));
    expect(retryAfterS).toBeGreaterThan(0);

    let settled: 'ended' | Error | undefined;
    const followed = (async () => {
      for await (const _event of cairn.runs.events(runId)) {
        // The fixture's finish stores no events: the stream ends when the run does.
      }
    })().then(
      () => (settled = 'ended'),
      (error: Error) => (settled = error),
    );
    // A client bounded to one attempt sees the typed 429 with the server's wait.
    const bounded = await cairn.runs
      .events(runId, { reconnect: { maxAttempts: 1 } })
      .next()
      .catch((error: unknown) => error);
    expect((bounded as Error & { cause?: unknown }).cause).toBeInstanceOf(TooManyRequests);
    expect((bounded as Error & { cause: TooManyRequests }).cause.retryAfterMs).toBe(
      retryAfterS * 1000,
    );

    expect(settled).toBeUndefined();

    await fx.complete(runId, 'done');
    holder.abort();
    await followed;
    expect(settled).toBe('ended');
    expect((await cairn.runs.wait(runId, { timeoutMs: 10_000 })).status).toBe('COMPLETED');
  });
});
