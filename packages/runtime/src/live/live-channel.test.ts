import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { testDatabase, TEST_REDIS_URL_VAR, type TestDatabase } from '@cairn/services';
import { createLivePublisher, createLiveSubscriber } from './create-live.js';
import {
  liveChannel,
  type LiveEvent,
  type LivePublisher,
  type LiveSubscriber,
} from './live-event.js';

const redisUrl = process.env[TEST_REDIS_URL_VAR];
const backends = [...(redisUrl ? (['redis'] as const) : []), 'postgres'] as const;

function event(runId: string, type: string, data: Record<string, unknown> = {}): LiveEvent {
  return { type, runId, epoch: 1, data, at: new Date().toISOString() };
}

function until<T>(what: string, check: () => T | undefined, timeoutMs = 5000): Promise<T> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const tick = () => {
      const value = check();
      if (value !== undefined) return resolve(value);
      if (Date.now() - started > timeoutMs)
        return reject(new Error(`timed out waiting for ${what}`));
      setTimeout(tick, 10);
    };
    tick();
  });
}

describe.each(backends)('live channel (%s)', (backend) => {
  let db: TestDatabase | undefined;
  let publisher: LivePublisher | undefined;
  let subscriber: LiveSubscriber | undefined;

  afterEach(async () => {
    await publisher?.close();
    await subscriber?.close();
    await db?.drop();
  });

  it("delivers a run's events in order, to its own subscribers only", async () => {
    db = await testDatabase();
    const options = { backend, redisUrl, databaseUrl: db.url };
    publisher = createLivePublisher(options);
    subscriber = createLiveSubscriber(options);
    const runId = randomUUID();
    const other = randomUUID();
    const got: LiveEvent[] = [];
    const gotOther: LiveEvent[] = [];
    const unsubscribe = await subscriber.subscribe(runId, (e) => got.push(e));
    await subscriber.subscribe(other, (e) => gotOther.push(e));
    const deltas = ['Dur', 'able ', 'runs'].map((text, i) =>
      event(runId, 'ModelDelta', { message_index: 2, offset: i, text }),
    );
    for (const delta of deltas) publisher.publish(delta);
    publisher.publish(event(other, 'ToolCallStarted'));
    await until('three deltas', () => (got.length === 3 ? got : undefined));
    expect(got).toEqual(deltas);
    await until("the other run's event", () => (gotOther.length === 1 ? gotOther : undefined));
    expect(gotOther[0]!.runId).toBe(other);

    await unsubscribe();
    publisher.publish(event(runId, 'ModelDelta', { text: 'after unsubscribe' }));
    publisher.publish(event(other, 'ToolCallCompleted'));
    await until("the other run's second event", () =>
      gotOther.length === 2 ? gotOther : undefined,
    );
    expect(got).toHaveLength(3);
  });
});

describe.runIf(redisUrl)('live channel (redis): commands per tick', () => {
  let publisher: LivePublisher | undefined;
  let subscriber: LiveSubscriber | undefined;
  let counter: Redis | undefined;

  afterEach(async () => {
    await publisher?.close();
    await subscriber?.close();
    await counter?.quit();
  });

  it("sends a tick's events of a run in fewer PUBLISH commands than events, all delivered in order", async () => {
    const options = { backend: 'redis' as const, redisUrl, databaseUrl: '' };
    publisher = createLivePublisher(options);
    subscriber = createLiveSubscriber(options);
    const runId = randomUUID();
    const got: LiveEvent[] = [];
    await subscriber.subscribe(runId, (e) => got.push(e));
    // A plain subscriber on the run's channel: each message it receives is one PUBLISH.
    counter = new Redis(redisUrl!);
    let messages = 0;
    let carried = 0;
    counter.on('message', (_channel: string, text: string) => {
      messages++;
      const value: unknown = JSON.parse(text);
      carried += Array.isArray(value) ? value.length : 1;
    });
    await counter.subscribe(liveChannel(runId));

    const burst = (from: number) =>
      Array.from({ length: 40 }, (_, i) =>
        event(runId, 'ModelDelta', { message_index: 1, offset: from + i, text: `t${from + i}` }),
      );
    const first = burst(0);
    for (const e of first) publisher.publish(e);
    // A second burst a tick later, while the first may still be in flight.
    await new Promise<void>((resolve) => setImmediate(resolve));
    const second = burst(first.length);
    for (const e of second) publisher.publish(e);
    const all = [...first, ...second];

    await until('every event', () => (got.length >= all.length ? got : undefined));
    expect(got).toEqual(all);
    await until('the counter sees every event', () =>
      carried >= all.length ? carried : undefined,
    );
    expect(carried).toBe(all.length);
    // One command per tick: the two bursts went out in two messages.
    expect(messages).toBeLessThanOrEqual(2);
  });
});
