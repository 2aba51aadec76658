import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ModelGate, type PermitRequest } from '@cairn/engine';
import { createRedisConnection, RedisModelCapacity } from '@cairn/runtime';
import {
  requiresRedis,
  startRedisCluster,
  testRedisUrl,
  type RedisClusterService,
} from '@cairn/services';
import { describeModelCapacityConformance } from './model-capacity-conformance.js';

const request = (model: string, overrides: Partial<PermitRequest> = {}): PermitRequest => ({
  model,
  limit: { concurrency: 1, requestsPerMinute: 100, tokensPerMinute: 10_000 },
  waiterId: `run-${randomUUID()}`,
  tenant: 'acme',
  weight: 1,
  priority: 5,
  waitedMs: 0,
  tokens: 100,
  ...overrides,
});

describe('RedisModelCapacity', requiresRedis(), () => {
  describeModelCapacityConformance('Redis', async (timings) => {
    const redis = new Redis(testRedisUrl());
    // As the worker opens it: models nothing governs are granted locally until a 429 is published.
    const subscriber = new Redis(testRedisUrl(), { lazyConnect: true });
    const capacity = new RedisModelCapacity(redis, {
      prefix: `test-${randomUUID()}`,
      subscriber,
      ...timings,
    });
    return {
      capacity,
      close: async () => {
        subscriber.disconnect();
        await redis.quit();
      },
    };
  });

  describe('on the shared server', () => {
    const connections: Redis[] = [];
    const connect = () => {
      const redis = new Redis(testRedisUrl());
      connections.push(redis);
      return redis;
    };
    afterEach(async () => {
      await Promise.all(connections.splice(0).map((r) => r.quit()));
    });

    it('two workers with their own connections share one limit', async () => {
      const prefix = `test-${randomUUID()}`;
      const model = 'shared-model';
      const one = new RedisModelCapacity(connect(), { prefix });
      const two = new RedisModelCapacity(connect(), { prefix });
      const held = await one.tryAcquire(request(model));
      expect(held.granted).toBe(true);
      expect(await two.tryAcquire(request(model))).toMatchObject({
        granted: false,
        reason: 'concurrency',
      });
      expect((await two.snapshot()).find((s) => s.model === model)).toMatchObject({
        inFlight: 1,
        waiting: 1,
      });
    });

    /** A connection that counts the permit scripts it sends (EVALSHA, or EVAL after a NOSCRIPT). */
    const traced = () => {
      const redis = connect();
      const sent = { scripts: 0 };
      const send = redis.sendCommand.bind(redis);
      redis.sendCommand = (command, stream) => {
        if (/^eval/i.test(command.name)) sent.scripts++;
        return send(command, stream);
      };
      return { redis, sent };
    };
    /** A gate for one run, as an execution opens it, on a worker configured with no model limit. */
    const gateOn = (limiter: RedisModelCapacity) =>
      new ModelGate(
        { limiter, limits: [] },
        {
          runId: `run-${randomUUID()}`,
          tenant: '',
          priority: 5,
          createdAt: Date.now(),
          mayPark: true,
          carried: { ms: 0 },
          signal: new AbortController().signal,
          onWait: () => undefined,
        },
      );
    /** One model request through `gate`: permit, request, release; the scripts it sent. */
    const modelRequest = async (gate: ModelGate, model: string, sent: { scripts: number }) => {
      const before = sent.scripts;
      const { permit } = await gate.take(model, () => 100);
      await gate.hold(permit, () => Promise.resolve());
      await gate.release(permit, {
        usage: { inputTokens: 60, outputTokens: 40, totalTokens: 100 },
      });
      return sent.scripts - before;
    };

    it('a model nothing limits takes no round trip per request once seen so; a lost subscription asks again', async () => {
      const prefix = `test-${randomUUID()}`;
      const model = 'unlimited-model';
      const { redis, sent } = traced();
      const subscriber = connect();
      const capacity = new RedisModelCapacity(redis, { prefix, subscriber });
      const gate = gateOn(capacity);
      // The first requests ask the server while the 429 notices' subscription comes up.
      await expect.poll(() => modelRequest(gate, model, sent)).toBe(0);
      let scripts = 0;
      for (let i = 0; i < 20; i++) scripts += await modelRequest(gate, model, sent);
      expect(scripts).toBe(0);

      // Notices missed while the subscription is down: what was learned is forgotten.
      const closed = once(subscriber, 'close');
      subscriber.disconnect(true);
      await closed;
      expect(await modelRequest(gate, model, sent)).toBe(1);
      await expect.poll(() => modelRequest(gate, model, sent)).toBe(0);
    });

    it('a 429 learned on one worker pauses another that grants the model locally, once the notice arrives', async () => {
      const prefix = `test-${randomUUID()}`;
      const model = 'shared-unlimited-model';
      const one = new RedisModelCapacity(connect(), { prefix, subscriber: connect() });
      // Trusts what it learned for far longer than the test: only the notice makes it ask again.
      const { redis, sent } = traced();
      const two = new RedisModelCapacity(redis, {
        prefix,
        subscriber: connect(),
        ungovernedTtlMs: 3_600_000,
      });
      await expect.poll(() => modelRequest(gateOn(two), model, sent)).toBe(0);

      const held = await one.tryAcquire(request(model, { limit: undefined }));
      expect(held.granted).toBe(true);
      if (held.granted) await one.rateLimited(held.permit, { retryAfterMs: 60_000 }, undefined);
      await expect
        .poll(() => two.tryAcquire(request(model, { limit: undefined })))
        .toMatchObject({ granted: false, reason: 'paused' });
    });

    it('every key lies under the prefix and expires: an idle model leaves nothing behind', async () => {
      const redis = connect();
      const prefix = `test-${randomUUID()}`;
      const windowMs = 1000;
      const capacity = new RedisModelCapacity(redis, { prefix, windowMs, leaseMs: 1000 });
      const model = 'expiring-model';
      const answer = await capacity.tryAcquire(request(model, { limit: { concurrency: 2 } }));
      expect(answer.granted).toBe(true);
      if (answer.granted) await capacity.release(answer.permit, { ok: true, usedTokens: 50 });
      const held = await capacity.tryAcquire(request(model, { limit: { requestsPerMinute: 5 } }));
      expect(held.granted).toBe(true);
      if (held.granted) await capacity.rateLimited(held.permit, { retryAfterMs: 500 }, undefined);
      await capacity.tryAcquire(request(model, { limit: { concurrency: 1 } }));

      const keys = await redis.keys(`${prefix}*`);
      expect(keys.length).toBeGreaterThan(0);
      for (const key of keys) {
        expect(key.startsWith(`${prefix}:cap`), key).toBe(true);
        const ttl = await redis.pttl(key);
        expect(ttl, key).toBeGreaterThan(0);
        expect(ttl, key).toBeLessThanOrEqual(4 * (windowMs + 250));
      }
    });
  });

  describe('on a Redis Cluster', () => {
    let cluster: RedisClusterService | undefined;
    beforeAll(async () => {
      cluster = await startRedisCluster(3);
    }, 60_000);
    afterAll(async () => {
      await cluster?.stop();
    });

    it('every key of the limiter lands in the slot of its hash-tagged prefix', async () => {
      expect(
        cluster,
        'redis-cli is needed next to redis-server to create the cluster',
      ).toBeDefined();
      const c = cluster!;
      const connection = createRedisConnection({ url: c.url, cluster: true });
      try {
        const prefix = '{cairn}';
        const capacity = new RedisModelCapacity(connection, { prefix, windowMs: 1000 });
        const model = `cluster-${randomUUID()}`;
        const first = await capacity.tryAcquire(request(model));
        expect(first.granted).toBe(true);
        expect(await capacity.tryAcquire(request(model, { waiterId: 'second' }))).toMatchObject({
          granted: false,
          reason: 'concurrency',
        });
        if (first.granted) {
          await capacity.renew(first.permit);
          await capacity.release(first.permit, { ok: true, usedTokens: 80 });
        }
        const second = await capacity.tryAcquire(request(model, { waiterId: 'second' }));
        expect(second.granted).toBe(true);
        if (second.granted) await capacity.rateLimited(second.permit, {}, undefined);
        await capacity.leave(model, 'second');
        expect((await capacity.snapshot()).find((s) => s.model === model)).toMatchObject({
          inFlight: 0,
          concurrencyLimit: 1,
        });

        const slot = await c.cli(['CLUSTER', 'KEYSLOT', prefix]);
        let found = 0;
        for (const node of c.nodes) {
          const keys = (await c.cli(['-p', String(node.port), 'KEYS', `${prefix}:cap*`]))
            .split('\n')
            .filter(Boolean);
          for (const key of keys) expect(await c.cli(['CLUSTER', 'KEYSLOT', key]), key).toBe(slot);
          found += keys.length;
        }
        expect(found).toBeGreaterThan(0);
      } finally {
        await connection.quit();
      }
    });
  });
});
