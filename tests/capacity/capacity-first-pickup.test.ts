/**
 * A run's pickup asks the limiter before its claim (docs/capacity.md, "Before the first claim" and
 * "Back from a park"): one worker process on the fleet's queue backend, a model that takes one
 * request at a time (at the provider and in the fleet's limit), and a run whose request the
 * provider holds in flight so that the model has no room while the cases look.
 */
import { fileURLToPath } from 'node:url';
import {
  firstUserInput,
  startFakeOpenAIServer,
  type FakeOpenAIServer,
} from '@cairn/engine/testing';
import type { RunView } from '@cairn/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  FLEET_BACKEND,
  startFleet,
  waitFor,
  type Fleet,
  type SpawnedWorker,
} from '../fleet/fleet.js';
import { agentOn, capacityScript, createRegistry, modelName } from './capacity-registry.js';

const REGISTRY = fileURLToPath(new URL('./capacity-registry.ts', import.meta.url));
/** How long a case waits for a run's state: below the suite's 60 s test timeout, so a stuck run is named (a case took 5.5 s with two suites at once). */
const WAIT_MS = 45_000;
const SINGLE = agentOn('single');

describe(`a run's pickup while its model has no room (${FLEET_BACKEND})`, () => {
  let fleet: Fleet;
  let server: FakeOpenAIServer;
  let worker: SpawnedWorker;
  /** The input whose next request the provider holds in flight until `release`. */
  let hold: { input: string; held: boolean; released: Promise<void> } | undefined;

  beforeAll(async () => {
    server = await startFakeOpenAIServer({
      decide: capacityScript,
      // Each answer holds the slot long enough that the wait a refused run is told (the limiter's
      // average hold) passes the capacity wait below: it waits in line rather than in place.
      latencyMs: 500,
      quota: { perModel: { single: { concurrency: 1 } } },
      beforeAnswer: ({ context }) => {
        if (!hold || hold.held || firstUserInput(context.messages) !== hold.input) return;
        hold.held = true;
        return hold.released;
      },
    });
    fleet = await startFleet({
      backend: FLEET_BACKEND,
      lockMs: 5_000,
      stalledIntervalMs: 1_000,
      registryModule: REGISTRY,
      registry: createRegistry({ baseUrl: server.url }),
    });
    worker = await fleet.spawnWorker('w', {
      OPENAI_BASE_URL: server.url,
      WORKER_CONCURRENCY: '2',
      CAIRN_MODEL_LIMITS: JSON.stringify([{ model: modelName('single'), concurrency: 1 }]),
      CAIRN_CAPACITY_WAIT_MS: '150',
    });
  });
  afterAll(async () => {
    await fleet?.stop();
    await server?.close();
  });

  /** Enqueues a run whose first model request the provider holds in flight; resolves once it is held. */
  async function holdTheModel(input: string): Promise<{ runId: string; release(): void }> {
    let release!: () => void;
    hold = { input, held: false, released: new Promise<void>((resolve) => (release = resolve)) };
    const { runId } = await fleet.client.enqueueRun({ entity: SINGLE, input });
    await waitFor(() => hold?.held === true, WAIT_MS, 'the holder run’s request in flight');
    return {
      runId,
      release: () => {
        hold = undefined;
        release();
      },
    };
  }

  /** Resolves once the worker delayed `runId`'s first job again without a claim. */
  function parkedBeforeItsClaim(runId: string): Promise<void> {
    return worker.waitForLog(`"jobId":"run-${runId}","delayMs"`, WAIT_MS);
  }

  async function viewOf(runId: string): Promise<RunView> {
    return (await fleet.client.getRun(runId))!;
  }

  it('its first pickup waits in line without a claim (PENDING, no attempt), and it is claimed with reason run once the model has room', async () => {
    const holder = await holdTheModel('holder one');
    const { runId } = await fleet.client.enqueueRun({ entity: SINGLE, input: 'second in line' });
    await parkedBeforeItsClaim(runId);
    const waiting = await viewOf(runId);
    expect(waiting.status).toBe('PENDING');
    expect(waiting.epoch).toBe(0);
    expect(waiting.attempts).toEqual([]);
    // What it waits for is on its view, as for a run parked after a claim.
    expect(waiting.waiting).toEqual({
      for: 'capacity',
      model: expect.any(String),
      until: expect.any(String),
    });

    holder.release();
    for (const id of [holder.runId, runId])
      await fleet.client.waitForRun(id, { timeoutMs: WAIT_MS });
    const done = await viewOf(runId);
    expect(done.status).toBe('COMPLETED');
    expect(done.waiting).toBeNull();
    expect(done.attempts[0]!.reason).toBe('run');
    expect(server.quota.rejected('single')).toBe(0);
  });

  it('a run whose deadline passes while it waits in line before its claim is ended by the pickup that finds it past its deadline', async () => {
    const holder = await holdTheModel('holder two');
    const { runId } = await fleet.client.enqueueRun({
      entity: SINGLE,
      input: 'out of time in line',
      deadlineMs: 1_500,
    });
    await parkedBeforeItsClaim(runId);
    // The model still has no room: the run ends at a pickup, not by waiting for its permit.
    await waitFor(
      async () => (await viewOf(runId)).status === 'ERROR',
      WAIT_MS,
      'the run ended at its deadline',
    );
    const ended = await viewOf(runId);
    expect(ended.error?.name).toBe('DeadlineExceededError');
    // One claim, by its own job's pickup (the deadline sweep claims nothing), with nothing run.
    expect(ended.attempts.map((a) => a.reason)).toEqual(['run']);
    expect(ended.messages.filter((m) => m.role === 'assistant')).toEqual([]);
    expect(hold?.held).toBe(true);

    holder.release();
    await fleet.client.waitForRun(holder.runId, { timeoutMs: WAIT_MS });
    expect((await viewOf(holder.runId)).status).toBe('COMPLETED');
  });
});
