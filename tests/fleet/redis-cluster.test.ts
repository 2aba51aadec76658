import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requiresRedis, startRedisCluster, type RedisClusterService } from '@cairn/services';
import { DEFAULT_CLUSTER_QUEUE_PREFIX } from '@cairn/runtime';
import { allTools, holderAfterMemberCheckpoint, startFleet, TEAM, type Fleet } from './fleet.js';

describe('Redis Cluster: three masters, a worker SIGKILLed mid-run', requiresRedis(), () => {
  let cluster: RedisClusterService | undefined;
  let fleet: Fleet | undefined;
  beforeAll(async () => {
    cluster = await startRedisCluster(3);
  }, 60_000);
  afterAll(async () => {
    await fleet?.stop();
    await cluster?.stop();
  });

  /** Every key on every node, with the node's port. */
  async function keysByNode(c: RedisClusterService): Promise<Map<number, string[]>> {
    const byNode = new Map<number, string[]>();
    for (const node of c.nodes) {
      const listed = await c.cli(['-p', String(node.port), 'KEYS', '*']);
      byNode.set(node.port, listed.split('\n').filter(Boolean));
    }
    return byNode;
  }

  it('team run: the worker holding it is killed after its first checkpoint; another recovers it on the cluster', async () => {
    expect(cluster, 'redis-cli is needed next to redis-server to create the cluster').toBeDefined();
    const c = cluster!;
    fleet = await startFleet({ backend: 'redis', redisUrl: c.url, redisCluster: true });
    const f = fleet;
    await f.spawnWorker('a');
    await f.spawnWorker('b');
    const run = await f.client.enqueueRun({
      entity: TEAM,
      input: "Research 'cairns'",
      checkpoint: 'tool-batch',
    });

    const victim = await holderAfterMemberCheckpoint(f, run.runId);
    victim.kill('SIGKILL');
    await victim.exited;

    const done = await f.client.waitForRun(run.runId, { timeoutMs: 30_000 });
    expect(done.status).toBe('COMPLETED');
    const view = (await f.client.getRun(run.runId))!;
    expect(view.run_id).toBe(run.runId);
    const recovered = view.attempts.find((a) => a.reason === 'recovered');
    expect(recovered?.worker_id).toBeDefined();
    expect(recovered!.worker_id).not.toBe(victim.id);
    expect(allTools(view).filter((t) => t.name === 'slow_search')).toHaveLength(1);

    // Every key of the queue carries the {cairn} tag, so all hash to one slot, held by one node.
    const byNode = await keysByNode(c);
    const keys = [...byNode.values()].flat();
    expect(keys.length).toBeGreaterThan(0);
    for (const key of keys)
      expect(key.startsWith(`${DEFAULT_CLUSTER_QUEUE_PREFIX}:`), key).toBe(true);
    const slots = new Set(await Promise.all(keys.map((key) => c.cli(['CLUSTER', 'KEYSLOT', key]))));
    expect([...slots]).toEqual([await c.cli(['CLUSTER', 'KEYSLOT', DEFAULT_CLUSTER_QUEUE_PREFIX])]);
    expect([...byNode.values()].filter((onNode) => onNode.length > 0)).toHaveLength(1);
  }, 90_000);
});
