/**
 * Runs waiting in a model's line across a Redis restart (docs/capacity.md and docs/operations.md, "Model
 * capacity"): two worker processes on a Redis of the test's own (append-only file, so a restart
 * keeps the queue and the limiter's line), a provider that takes one request at a time and a
 * fleet limit equal to it. While runs wait in line (parked after a claim, or before their first,
 * docs/capacity.md "Before the first claim"), Redis is restarted: every run
 * completes, none is lost, no committed tool batch runs twice, and the provider never answers 429.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startFakeOpenAIServer, type FakeOpenAIServer } from '@cairn/engine/testing';
import { requiresRedis, startRedis, type RedisService } from '@cairn/services';
import type { RunView } from '@cairn/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allTools, holderOf, startFleet, waitFor, type Fleet } from '../fleet/fleet.js';
import {
  agentOn,
  capacityScript,
  createRegistry,
  modelName,
  readToolLedger,
} from './capacity-registry.js';
import { expectEachCommittedToolRanOnce } from './committed-once.js';

const REGISTRY = fileURLToPath(new URL('./capacity-registry.ts', import.meta.url));
const TEST_TIMEOUT_MS = 120_000;
/** How long the case waits for its runs to end: below {@link TEST_TIMEOUT_MS}, so a stuck run is named. */
const RUNS_TIMEOUT_MS = 90_000;
const RUNS = 6;

describe('runs waiting in line across a Redis restart', requiresRedis(), () => {
  let redis: RedisService | undefined;
  let server: FakeOpenAIServer | undefined;
  let fleet: Fleet | undefined;

  beforeAll(async () => {
    redis = (await startRedis({ ignoreEnv: true, appendonly: true }))!;
    server = await startFakeOpenAIServer({
      decide: capacityScript,
      latencyMs: 300,
      quota: { perModel: { single: { concurrency: 1 } } },
    });
    fleet = await startFleet({
      backend: 'redis',
      redisUrl: redis.url,
      lockMs: 5_000,
      stalledIntervalMs: 1_000,
      registryModule: REGISTRY,
      registry: createRegistry({ baseUrl: server.url }),
    });
    const env = {
      OPENAI_BASE_URL: server.url,
      WORKER_CONCURRENCY: '3',
      CAIRN_MODEL_LIMITS: JSON.stringify([{ model: modelName('single'), concurrency: 1 }]),
      CAIRN_CAPACITY_WAIT_MS: '150',
    };
    await Promise.all(['a', 'b'].map((name) => fleet!.spawnWorker(name, env)));
  }, TEST_TIMEOUT_MS);
  afterAll(async () => {
    await fleet?.stop();
    await server?.close();
    await redis?.stop();
  });

  it(
    'every run completes once, none lost and no committed tool batch run twice',
    async () => {
      const f = fleet!;
      const ids = (
        await Promise.all(
          Array.from({ length: RUNS }, (_, i) =>
            f.client.enqueueRun({ entity: agentOn('single'), input: `single topic ${i}` }),
          ),
        )
      ).map((r) => r.runId);
      // The restart point: two runs waiting in the model's line, parked (RUNNING, waiting, held by
      // no worker) or, never claimed, their first job delayed again before its claim (a worker's log).
      await waitFor(
        async () => {
          const logs = f.workers.map((w) => readFileSync(w.logFile, 'utf8')).join('');
          const views = await Promise.all(ids.map(async (id) => (await f.client.getRun(id))!));
          const inLine = views.filter(
            (v) =>
              (v.waiting !== null && holderOf(v) === undefined) ||
              (v.status === 'PENDING' && logs.includes(`"jobId":"run-${v.run_id}","delayMs"`)),
          );
          return inLine.length >= 2;
        },
        60_000,
        'two runs waiting in line',
      );
      await redis!.restart();

      await Promise.all(ids.map((id) => f.client.waitForRun(id, { timeoutMs: RUNS_TIMEOUT_MS })));
      const views: RunView[] = await Promise.all(
        ids.map(async (id) => (await f.client.getRun(id))!),
      );
      expect(views.map((v) => `${v.input}: ${v.status}`)).toEqual(
        views.map((v) => `${v.input}: COMPLETED`),
      );
      for (const v of views) {
        expect(v.content).toContain(`Report on ${v.input}`);
        expect(v.waiting).toBeNull();
      }
      // Each committed tool result names the execution that produced it: that one ran once, none after it.
      const ledger = readToolLedger(f.ledgerFile);
      const committed = views.flatMap(allTools).filter((t) => t.status === 'completed');
      expect(committed).toHaveLength(RUNS * 3);
      expectEachCommittedToolRanOnce(expect, committed, ledger);
      expect(server!.quota.rejected('single')).toBe(0);
      expect(views.some((v) => v.attempts.some((a) => a.outcome === 'parked'))).toBe(true);
    },
    TEST_TIMEOUT_MS,
  );
});
