import { execFile } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { ServiceStartError } from './errors.js';
import { findBinary } from './find-binary.js';
import { freePort } from './free-port.js';
import { startRedis, type RedisService } from './start-redis.js';

const run = promisify(execFile);

/** Environment variable naming the `redis-cli` binary (creates the cluster); when set, nothing else is searched. */
export const REDIS_CLI_VAR = 'CAIRN_REDIS_CLI';

/** A throwaway Redis Cluster of masters on 127.0.0.1. */
export interface RedisClusterService {
  /** Every node's URL, comma-separated: what `REDIS_URL` takes with `CAIRN_REDIS_CLUSTER=1`. */
  url: string;
  /** The nodes, in creation order. */
  nodes: RedisService[];
  /** Runs `redis-cli` against the first node (e.g. `['CLUSTER', 'KEYSLOT', key]`) and returns its trimmed output. */
  cli(args: string[]): Promise<string>;
  /** Stops every node and removes their directories; idempotent. */
  stop(): Promise<void>;
}

const CLUSTER_OK_TIMEOUT_MS = 30_000;

/**
 * Starts `masters` cluster-enabled `redis-server` processes on free ports,
 * joins them with `redis-cli --cluster create` (no replicas), and resolves
 * once every node reports `cluster_state:ok`; undefined when the machine has
 * no `redis-server` or no `redis-cli`. Every process started is stopped on failure.
 *
 * @example
 * const cluster = await startRedisCluster();
 * if (cluster) try { await useCluster(cluster.url); } finally { await cluster.stop(); }
 */
export async function startRedisCluster(masters = 3): Promise<RedisClusterService | undefined> {
  const cli = findBinary('redis-cli', REDIS_CLI_VAR, '/usr/bin/redis-cli');
  if (!cli) return undefined;
  const nodes: RedisService[] = [];
  const stop = async () => {
    await Promise.all(nodes.map((node) => node.stop()));
  };
  try {
    for (let i = 0; i < masters; i++) {
      // The cluster bus gets its own free port: the default (port + 10000) may be past 65535.
      const busPort = await freePort();
      const node = await startRedis({
        ignoreEnv: true,
        args: [
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          'nodes.conf',
          '--cluster-port',
          String(busPort),
        ],
      });
      if (!node) {
        await stop();
        return undefined;
      }
      nodes.push(node);
    }
    const addresses = nodes.map((node) => `127.0.0.1:${node.port}`);
    await run(cli, [
      '--cluster',
      'create',
      ...addresses,
      '--cluster-replicas',
      '0',
      '--cluster-yes',
    ]);
    const deadline = Date.now() + CLUSTER_OK_TIMEOUT_MS;
    for (const node of nodes) {
      for (;;) {
        const { stdout } = await run(cli, ['-p', String(node.port), 'cluster', 'info']);
        if (stdout.includes('cluster_state:ok')) break;
        if (Date.now() > deadline)
          throw new Error(
            `node ${node.port}: cluster_state not ok after ${CLUSTER_OK_TIMEOUT_MS} ms`,
          );
        await sleep(50);
      }
    }
  } catch (error) {
    await stop();
    throw new ServiceStartError('redis', 'the Redis Cluster did not form', String(error), {
      cause: error,
    });
  }
  return {
    url: nodes.map((node) => node.url).join(','),
    nodes,
    cli: async (args) =>
      (await run(cli, ['-p', String(nodes[0]!.port), '-c', ...args])).stdout.trim(),
    stop,
  };
}
