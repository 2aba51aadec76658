/**
 * Fair dispatch across tenants (docs/operations.md, "Fair dispatch across tenants"): runs are
 * queued while no worker runs, then one worker process with a single slot
 * takes them; the order of their first attempts is the order the queue
 * handed them out. On each queue backend: a tenant's priority-1 flood does
 * not hold back another tenant's default-priority runs beyond its share,
 * one tenant's runs go by priority then age, a tenant's resumed runs (a
 * decision's resume jobs) take their slots in its line, and weights 3:1 give a 3:1 share.
 */
import { fileURLToPath } from 'node:url';
import {
  requiresBackend,
  requiresRedis,
  startRedisCluster,
  type RedisClusterService,
} from '@cairn/services';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QUEUE_BACKENDS, startFleet, waitFor, type Fleet } from './fleet.js';

const LIFECYCLE_REGISTRY = fileURLToPath(new URL('./lifecycle-registry.ts', import.meta.url));
const ECHO = { kind: 'agent', name: 'echo' } as const;
/** A run of `echo` takes two quick model turns and a step of no time. */
const QUICK_ECHO = { LIFECYCLE_STEP_MS: '0', LIFECYCLE_MODEL_MS: '10', WORKER_CONCURRENCY: '1' };
const CASE_TIMEOUT_MS = 120_000;
const RUNS_TIMEOUT_MS = 90_000;

/** One queued run: its label and tenant. */
interface Queued {
  label: string;
  tenant: string;
  priority?: number;
}

const runsOf = (tenant: string, count: number, priority?: number, label = tenant): Queued[] =>
  Array.from({ length: count }, (_, i) => ({ label: `${label}${i}`, tenant, priority }));

/** acme's priority-1 flood, then globex's default runs. */
const FLOOD = [...runsOf('acme', 12, 1), ...runsOf('globex', 6)];

/** How many of the first `n` labels belong to `tenant`'s runs (by label prefix). */
const countIn = (order: readonly string[], n: number, prefix: string) =>
  order.slice(0, n).filter((label) => label.startsWith(prefix)).length;

/** A queued run's label and id. */
interface Created {
  label: string;
  runId: string;
}

/**
 * Queues `runs` in order with no worker running (then `beforeWorker`, if
 * given), then starts one worker with one slot and returns the labels in the
 * order their runs were first claimed. Cases on one fleet run in turn: each
 * one's worker is stopped after.
 */
async function claimOrder(
  fleet: Fleet,
  runs: readonly Queued[],
  beforeWorker?: (created: readonly Created[]) => Promise<void>,
): Promise<string[]> {
  const created: Created[] = [];
  for (const run of runs) {
    const { runId } = await fleet.client.enqueueRun({
      entity: ECHO,
      input: run.label,
      tenantId: run.tenant,
      ...(run.priority !== undefined && { priority: run.priority }),
    });
    created.push({ label: run.label, runId });
  }
  await beforeWorker?.(created);
  await fleet.spawnWorker(`w-${created[0]!.runId.slice(0, 8)}`, QUICK_ECHO);
  try {
    const started = await Promise.all(
      created.map(async ({ label, runId }) => {
        // A resumed run stays PAUSED until a worker claims its resume (waitForRun returns on PAUSED).
        await waitFor(
          async () => (await fleet.client.getRun(runId))?.status !== 'PAUSED',
          RUNS_TIMEOUT_MS,
          `${label} to be claimed`,
        );
        const done = await fleet.client.waitForRun(runId, { timeoutMs: RUNS_TIMEOUT_MS });
        expect(done.status, label).toBe('COMPLETED');
        const view = await fleet.client.getRun(runId);
        return { label, at: Date.parse(view!.attempts[0]!.started_at) };
      }),
    );
    return started.sort((a, b) => a.at - b.at).map((s) => s.label);
  } finally {
    await fleet.stopWorkers();
  }
}

for (const backend of QUEUE_BACKENDS)
  describe(`fair dispatch across tenants (${backend})`, requiresBackend(backend), () => {
    let fleet: Fleet;
    beforeAll(async () => {
      fleet = await startFleet({
        backend,
        registryModule: LIFECYCLE_REGISTRY,
        tenantWeights: { wide: 3 },
      });
    }, CASE_TIMEOUT_MS);
    afterAll(() => fleet?.stop());

    it(
      "serves another tenant's default runs within its share while a priority-1 flood queued before them waits",
      async () => {
        const order = await claimOrder(fleet, FLOOD);
        // Equal weights: in every prefix, globex has had its half (give or take the run in hand) until its runs are done.
        for (let n = 2; n <= 12; n += 2)
          expect(countIn(order, n, 'globex'), order.join(' ')).toBe(n / 2);
      },
      CASE_TIMEOUT_MS,
    );

    it(
      "takes one tenant's runs by priority, then age",
      async () => {
        const order = await claimOrder(fleet, [
          { label: 'p5-first', tenant: 'initech' },
          { label: 'p5-second', tenant: 'initech' },
          { label: 'p9', tenant: 'initech', priority: 9 },
          { label: 'p1-first', tenant: 'initech', priority: 1 },
          { label: 'p3', tenant: 'initech', priority: 3 },
          { label: 'p1-second', tenant: 'initech', priority: 1 },
        ]);
        expect(order).toEqual(['p1-first', 'p1-second', 'p3', 'p5-first', 'p5-second', 'p9']);
      },
      CASE_TIMEOUT_MS,
    );

    it(
      "takes a resume's slot in its tenant's line: resumed runs do not jump another tenant's backlog beyond their share",
      async () => {
        const resumed = runsOf('umbrella', 4);
        const order = await claimOrder(
          fleet,
          [...resumed, ...runsOf('hooli', 8)],
          async (created) => {
            // Suspended while queued (their jobs removed), then resumed: each resume is a decision's job.
            for (const { runId } of created.slice(0, resumed.length)) {
              expect((await fleet.client.suspendRun(runId)).kind).toBe('suspended');
              expect((await fleet.client.resumeRun(runId)).kind).toBe('resumed');
            }
          },
        );
        // Equal weights: in every prefix, umbrella's resumes have had at most their half.
        for (let n = 1; n <= order.length; n++)
          expect(countIn(order, n, 'umbrella'), order.join(' ')).toBeLessThanOrEqual(
            Math.ceil(n / 2),
          );
      },
      CASE_TIMEOUT_MS,
    );

    it(
      'gives tenants weighted 3:1 a 3:1 share',
      async () => {
        const order = await claimOrder(fleet, [...runsOf('narrow', 4), ...runsOf('wide', 12)]);
        for (let n = 4; n <= 16; n += 4)
          expect(countIn(order, n, 'wide'), order.join(' ')).toBe((3 * n) / 4);
      },
      CASE_TIMEOUT_MS,
    );
  });

describe('fair dispatch across tenants (Redis Cluster)', requiresRedis(), () => {
  let cluster: RedisClusterService | undefined;
  let fleet: Fleet | undefined;
  beforeAll(async () => {
    cluster = await startRedisCluster(3);
  }, CASE_TIMEOUT_MS);
  afterAll(async () => {
    await fleet?.stop();
    await cluster?.stop();
  });

  it(
    "serves another tenant's default runs within its share, the clocks in the queue's hash slot",
    async () => {
      expect(
        cluster,
        'redis-cli is needed next to redis-server to create the cluster',
      ).toBeDefined();
      const c = cluster!;
      fleet = await startFleet({
        backend: 'redis',
        redisUrl: c.url,
        redisCluster: true,
        registryModule: LIFECYCLE_REGISTRY,
      });
      const order = await claimOrder(fleet, FLOOD);
      for (let n = 2; n <= 12; n += 2)
        expect(countIn(order, n, 'globex'), order.join(' ')).toBe(n / 2);
      const nodesWithClocks: number[] = [];
      const nodesWithQueue: number[] = [];
      for (const node of c.nodes) {
        const keys = (await c.cli(['-p', String(node.port), 'KEYS', '*'])).split('\n');
        if (keys.some((k) => k.endsWith(':fair-clocks'))) nodesWithClocks.push(node.port);
        if (keys.some((k) => k.endsWith(':prioritized') || k.endsWith(':meta')))
          nodesWithQueue.push(node.port);
      }
      expect(nodesWithClocks).toHaveLength(1);
      expect(nodesWithQueue).toEqual(nodesWithClocks);
    },
    CASE_TIMEOUT_MS,
  );
});
