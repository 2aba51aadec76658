import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { PermitRequest } from '@cairn/engine';
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
    const capacity = new RedisModelCapacity(redis, { prefix: `test-${randomUUID()}`, ...timings });
    return { capacity, close: async () => void (await redis.quit()) };
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
