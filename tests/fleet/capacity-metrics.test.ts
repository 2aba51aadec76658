import type { Permit } from '@cairn/engine';
import { openModelCapacity, type OpenModelCapacity } from '@cairn/runtime';
import { freePort, hasTestRedis, testRedisUrl } from '@cairn/services';
import { afterEach, expect, it } from 'vitest';
import { QUEUE_BACKENDS, RESEARCHER, startFleet, waitFor, type Fleet } from './fleet.js';

// A worker process's model capacity gauges come from its main thread's limiter at each scrape;
// its runs (in an execution thread) report their waits for permits across the thread.

const MODEL = 'scripted:researcher';
/** How long a waiter that stopped asking stays in line: both limiters' default `waiterTtlMs`. */
const WAITER_TTL_MS = 2_000;
// The limiter lives beside the queue: on its Redis, or on Postgres with the PostgreSQL backend.
const backends = QUEUE_BACKENDS.filter((backend) => backend !== 'redis' || hasTestRedis());

let fleet: Fleet | undefined;
let limiter: OpenModelCapacity | undefined;
afterEach(async () => {
  await limiter?.close();
  await fleet?.stop();
  limiter = fleet = undefined;
});

/** Scrapes `/metrics` and returns its samples as `name{labels}` → value. */
async function scrape(url: string): Promise<Map<string, number>> {
  const response = await fetch(url);
  expect(response.status).toBe(200);
  const samples = new Map<string, number>();
  for (const line of (await response.text()).split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const cut = line.lastIndexOf(' ');
    samples.set(line.slice(0, cut), Number(line.slice(cut + 1)));
  }
  return samples;
}

/**
 * A fleet with one worker serving metrics, its model limited to one request
 * at a time, and that one slot held by another run of the fleet (taken on
 * the fleet's limiter, where the worker opens it).
 */
async function fleetWithTheSlotHeld(
  backend: (typeof backends)[number],
  env: Record<string, string> = {},
): Promise<{ f: Fleet; url: string; permit: Permit; limiter: OpenModelCapacity }> {
  fleet = await startFleet({ backend, toolDelayMs: 50 });
  const port = await freePort();
  await fleet.spawnWorker('a', {
    CAIRN_METRICS_PORT: String(port),
    CAIRN_MODEL_LIMITS: JSON.stringify([{ model: MODEL, concurrency: 1 }]),
    ...env,
  });
  limiter = openModelCapacity({
    backend,
    redisUrl: backend === 'redis' ? testRedisUrl() : undefined,
    queueName: fleet.client.runQueue.name,
    store: fleet.store,
  });
  const held = await limiter.capacity.tryAcquire({
    model: MODEL,
    limit: { concurrency: 1 },
    waiterId: 'another-run',
    tenant: '',
    weight: 1,
    priority: 5,
    waitedMs: 0,
    tokens: 1,
  });
  if (!held.granted) throw new Error(`the slot was not free: ${held.reason}`);
  return { f: fleet, url: `http://127.0.0.1:${port}/metrics`, permit: held.permit, limiter };
}

it.each(backends)(
  "a worker's /metrics shows a model's waiting runs and concurrency cap, then the run's wait for its permit by tenant (%s)",
  async (backend) => {
    const { f, url, permit, limiter } = await fleetWithTheSlotHeld(backend);
    // `run` mode waits in place (in line) rather than parking.
    const run = await f.client.enqueueRun({
      entity: RESEARCHER,
      input: "Research 'cairns'",
      checkpoint: 'run',
      tenantId: 'acme',
    });
    // Claimed, it waits in place: its first pickup, told a wait within the capacity wait, claims it
    // (docs/capacity.md, "Before the first claim"). The gauge counts that pickup's ask too, until the
    // waiter's TTL passes: a waiter still counted a TTL after the run was seen RUNNING has asked since
    // its claim, so its own turn waits for the permit. (Released before that turn asks, the slot
    // would be granted at its first ask, a wait of nothing: two suites at once found no sample.)
    await waitFor(
      async () => (await f.client.getRunStatus(run.runId)) === 'RUNNING',
      20_000,
      'the run to be claimed',
      f.workers[0]!.exited,
    );
    const claimSeenAt = Date.now();
    let samples = new Map<string, number>();
    await waitFor(
      async () => {
        samples = await scrape(url);
        return (
          Date.now() - claimSeenAt > WAITER_TTL_MS + 500 &&
          samples.get(`cairn_model_permits_waiting{model="${MODEL}"}`) === 1
        );
      },
      20_000,
      "the run's turn to wait in line for a permit",
      f.workers[0]!.exited,
    );
    expect(samples.get(`cairn_model_concurrency_limit{model="${MODEL}"}`)).toBe(1);

    await limiter.capacity.release(permit, { ok: true });
    expect((await f.client.waitForRun(run.runId, { timeoutMs: 30_000 })).status).toBe('COMPLETED');
    // The wait is observed in the main thread when the execution thread's report of it arrives,
    // not with the run's commit: read until it has (two suites at once found none at a single read).
    await waitFor(
      async () => {
        samples = await scrape(url);
        return samples.has(
          `cairn_model_capacity_wait_seconds_count{model="${MODEL}",tenant="acme"}`,
        );
      },
      20_000,
      "the run's wait for its permit to be observed",
      f.workers[0]!.exited,
    );
    expect(samples.get(`cairn_model_permits_waiting{model="${MODEL}"}`)).toBe(0);
    // Its first turn waited for the slot; the later ones found it free.
    expect(
      samples.get(`cairn_model_capacity_wait_seconds_count{model="${MODEL}",tenant="acme"}`),
    ).toBe(1);
    expect(
      samples.get(`cairn_model_capacity_wait_seconds_sum{model="${MODEL}",tenant="acme"}`),
    ).toBeGreaterThan(0);
    expect(samples.get(`cairn_run_claims_total{reason="run"}`)).toBe(1);
  },
);

it.each(backends)(
  'a run held in line for capacity is observed once, when its permit comes, with the whole wait, the time before its claim included (%s)',
  async (backend) => {
    const { f, url, permit, limiter } = await fleetWithTheSlotHeld(backend, {
      CAIRN_CAPACITY_WAIT_MS: '100',
    });
    const run = await f.client.enqueueRun({
      entity: RESEARCHER,
      input: "Research 'cairns'",
      checkpoint: 'tool-batch',
      tenantId: 'acme',
    });
    await waitFor(
      async () => (await f.client.getRun(run.runId))?.waiting?.model === MODEL,
      20_000,
      'the run to wait in line for the model',
      f.workers[0]!.exited,
    );
    // The run began waiting before this reading and gets its permit after the release.
    const parkSeenAt = Date.now();
    // A fixed time: the wait histogram must record at least this long a park.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const releasedAt = Date.now();
    await limiter.capacity.release(permit, { ok: true });
    expect((await f.client.waitForRun(run.runId, { timeoutMs: 30_000 })).status).toBe('COMPLETED');

    const samples = await scrape(url);
    const series = `{model="${MODEL}",tenant="acme"}`;
    expect(samples.get(`cairn_model_capacity_wait_seconds_count${series}`)).toBe(1);
    expect(samples.get(`cairn_model_capacity_wait_seconds_sum${series}`)).toBeGreaterThanOrEqual(
      (releasedAt - parkSeenAt) / 1000,
    );
    // Held before its first claim, it was claimed once, when its permit could be had.
    expect(samples.get(`cairn_run_claims_total{reason="run"}`)).toBe(1);
  },
);
