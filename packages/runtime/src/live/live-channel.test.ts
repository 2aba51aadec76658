import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { testDatabase, TEST_REDIS_URL_VAR, type TestDatabase } from '@cairn/services';
import { createLivePublisher, createLiveSubscriber } from './create-live.js';
import type { LiveEvent, LivePublisher, LiveSubscriber } from './live-event.js';

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
