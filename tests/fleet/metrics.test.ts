import { createClient } from '@cairn/client';
import { freePort } from '@cairn/services';
import { afterEach, expect, it } from 'vitest';
import { holderOf, RESEARCHER, startFleet, waitFor, type Fleet } from './fleet.js';

const backend = process.env.CAIRN_TEST_REDIS_URL ? 'redis' : 'postgres';

let fleet: Fleet | undefined;
afterEach(async () => {
  await fleet?.stop();
  fleet = undefined;
});

/** Scrapes `/metrics` and returns its samples as `name{labels}` → value. */
async function scrape(url: string): Promise<Map<string, number>> {
  const response = await fetch(url);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toContain('text/plain');
  const samples = new Map<string, number>();
  for (const line of (await response.text()).split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const cut = line.lastIndexOf(' ');
    samples.set(line.slice(0, cut), Number(line.slice(cut + 1)));
  }
  return samples;
}

function metricNames(samples: Map<string, number>): string[] {
  return [
    ...new Set(
      [...samples.keys()].map((key) => key.split('{')[0]!.replace(/_(bucket|sum|count)$/, '')),
    ),
  ].sort();
}

it(`workers and the producer serve Prometheus metrics of real runs, including a lease lost to a takeover (${backend})`, async () => {
  fleet = await startFleet({ backend, toolDelayMs: 300 });
  const f = fleet;
  const ports = { a: await freePort(), b: await freePort() };
  await f.spawnWorker('a', { CAIRN_METRICS_PORT: String(ports.a) });
  await f.spawnWorker('b', { CAIRN_METRICS_PORT: String(ports.b) });
  const producer = await f.spawnProducer('producer');

  const created = await createClient({ baseUrl: producer.baseUrl }).runs.create({
    ...RESEARCHER,
    input: "Research 'cairns'",
    checkpoint: 'tool-batch',
  });
  const run = { runId: created.run_id };
  let holder: string | undefined;
  await waitFor(
    async () => {
      const view = await f.client.getRun(run.runId);
      holder = holderOf(view);
      return holder !== undefined && (view?.last_checkpoint_at_message_index ?? 0) >= 3;
    },
    20_000,
    'the first checkpoint',
  );
  const zombie = f.workers.find((w) => w.id === holder)!;
  const survivor = f.workers.find((w) => w.id !== holder)!;
  zombie.kill('SIGSTOP');
  await waitFor(
    async () => {
      const taker = holderOf(await f.client.getRun(run.runId));
      return taker !== undefined && taker !== zombie.id;
    },
    15_000,
    'the other worker to take over',
  );
  zombie.kill('SIGCONT');
  expect((await f.client.waitForRun(run.runId, { timeoutMs: 30_000 })).status).toBe('COMPLETED');

  const url = (worker: typeof zombie) =>
    `http://127.0.0.1:${ports[worker.id as 'a' | 'b']}/metrics`;
  let zombieSamples = new Map<string, number>();
  await waitFor(
    async () => {
      zombieSamples = await scrape(url(zombie));
      return (zombieSamples.get('cairn_lease_lost_total') ?? 0) >= 1;
    },
    15_000,
    'the stopped worker to count its lost lease',
  );
  // The run's row says COMPLETED before the survivor's main thread has counted the finish its
  // execution thread posted, and before BullMQ has moved the job to completed: wait for both.
  const finishedKey = 'cairn_runs_finished_total{entity="researcher",status="COMPLETED"}';
  const completedJobsKey = `cairn_queue_jobs{queue="${f.client.runQueue.name}",state="completed"}`;
  let survivorSamples = new Map<string, number>();
  await waitFor(
    async () => {
      survivorSamples = await scrape(url(survivor));
      return (
        survivorSamples.get(finishedKey) !== undefined &&
        (survivorSamples.get(completedJobsKey) ?? 0) >= 1
      );
    },
    15_000,
    'the survivor to count the finish and its job completed',
  );

  expect(zombieSamples.get('cairn_run_claims_total{reason="run"}')).toBe(1);
  expect(
    zombieSamples.get('cairn_runs_finished_total{entity="researcher",status="COMPLETED"}'),
  ).toBeUndefined();
  expect(survivorSamples.get('cairn_run_claims_total{reason="recovered"}')).toBe(1);
  expect(survivorSamples.get(finishedKey)).toBe(1);
  expect(survivorSamples.get('cairn_lease_lost_total')).toBe(0);
  // The researcher searches once and fetches three details: the batches run before the stop are counted by the zombie.
  const fetches = (samples: Map<string, number>) =>
    samples.get('cairn_tool_call_seconds_count{tool="slow_fetch_detail",status="completed"}') ?? 0;
  expect(fetches(survivorSamples)).toBeGreaterThanOrEqual(1);
  expect(
    zombieSamples.get('cairn_tool_call_seconds_count{tool="slow_search",status="completed"}'),
  ).toBe(1);
  expect(
    survivorSamples.get('cairn_model_request_seconds_count{model="scripted:researcher"}'),
  ).toBeGreaterThanOrEqual(2);
  expect(
    survivorSamples.get(
      'cairn_model_tokens_total{model="scripted:researcher",tenant="",kind="output"}',
    ),
  ).toBeGreaterThan(0);
  expect(survivorSamples.get('cairn_checkpoint_commit_seconds_count')).toBeGreaterThanOrEqual(2);
  expect(survivorSamples.get('cairn_runs_paused')).toBe(0);

  const producerSamples = await scrape(`${producer.baseUrl}/metrics`);
  expect(producerSamples.get(`cairn_queue_up{queue="${f.client.runQueue.name}"}`)).toBe(1);
  expect(producerSamples.get('cairn_runs_paused')).toBe(0);
  expect(
    producerSamples.get(`cairn_queue_jobs{queue="${f.client.runQueue.name}",state="active"}`),
  ).toBe(0);
  expect(producerSamples.get('cairn_runs_enqueued_total{kind="agent",action="run"}')).toBe(1);
  expect(
    producerSamples.get(
      'cairn_http_requests_total{method="POST",route="/v1/agents/:name/runs",status="202"}',
    ),
  ).toBe(1);
  expect(await fetch(`http://127.0.0.1:${ports.a}/other`).then((r) => r.status)).toBe(404);

  console.log(`worker metrics: ${metricNames(survivorSamples).join(', ')}`);
  console.log(`producer metrics: ${metricNames(producerSamples).join(', ')}`);
});
