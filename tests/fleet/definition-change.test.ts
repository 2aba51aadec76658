import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { FINAL_STATUSES } from '@cairn/engine';
import {
  FLEET_BACKEND,
  holderOf,
  startFleet,
  waitFor,
  type Fleet,
  type SpawnedWorker,
} from './fleet.js';
import { DRAFTER, registryOf, type DefinitionVariant } from './definition-registry.js';

const DEFINITION_REGISTRY = fileURLToPath(new URL('./definition-registry.ts', import.meta.url));

let fleet: Fleet | undefined;
afterEach(async () => {
  await fleet?.stop();
  fleet = undefined;
});

function hashOf(variant: DefinitionVariant): string {
  return registryOf(variant).describe(DRAFTER)!.definitionHash!;
}

/** A worker of `variant`; its own steps are quick unless `stepMs` says otherwise. */
function spawn(
  f: Fleet,
  name: string,
  variant: DefinitionVariant,
  graceMs: number,
  env: Record<string, string> = {},
): Promise<SpawnedWorker> {
  return f.spawnWorker(name, {
    DEFINITION_VARIANT: variant,
    CAIRN_VERSION_GRACE_MS: String(graceMs),
    DRAFT_STEP_MS: '300',
    ...env,
  });
}

/**
 * Two or three worker processes start in each test (spawnWorker allows each 90 s on a loaded
 * machine): vitest's 60 s is too short for a test under a full run's load (one took 61.5 s).
 */
const TEST_TIMEOUT_MS = 180_000;

/** A reconciler quick enough to re-enqueue a run whose job ran out of retries while it waited for a worker with its definition. */
const QUICK_RECONCILER = { CAIRN_RECONCILE_INTERVAL_MS: '500', CAIRN_RECONCILE_AFTER_MS: '500' };

/**
 * A run of v1 started on worker `a`, `a` SIGKILLed after the run's first
 * checkpoint (one of its two tool batches; its second is slow, so the kill
 * lands in it), while worker `b` of `variant` runs beside it.
 */
async function runStartedThenOrphaned(
  variant: DefinitionVariant,
  graceMs: number,
  env: Record<string, string> = {},
) {
  fleet = await startFleet({
    backend: FLEET_BACKEND,
    registryModule: DEFINITION_REGISTRY,
    lockMs: 1000,
    stalledIntervalMs: 250,
  });
  const f = fleet;
  // Its second step outlasts the start of worker b however loaded the machine is (it is killed in it).
  const a = await spawn(f, 'a', 'v1', graceMs, {
    DRAFT_STEP_MS: '1000',
    DRAFT_LATER_STEP_MS: '50000',
  });
  const run = await f.client.enqueueRun({
    entity: DRAFTER,
    input: 'a memo',
    checkpoint: 'tool-batch',
  });
  await waitFor(
    async () => {
      const view = await f.client.getRun(run.runId);
      return holderOf(view) === 'a' && (view?.last_checkpoint_at_message_index ?? 0) >= 3;
    },
    20_000,
    'the first checkpoint on a',
  );
  const b = await spawn(f, 'b', variant, graceMs, env);
  a.kill('SIGKILL');
  await a.exited;
  return { f, b, runId: run.runId };
}

describe(`a run whose worker dies, resumed by workers with another definition (${FLEET_BACKEND})`, () => {
  it.each([
    ['changed instructions', 'prompt'],
    ['a changed tool parameter schema', 'schema'],
  ] as const)(
    'with %s: not resumed during the grace period, then ERROR naming both hashes; continue { upgrade: true } completes it on the new definition',
    async (_change, variant) => {
      const { f, b, runId } = await runStartedThenOrphaned(variant, 9000);
      const [h1, h2] = [hashOf('v1'), hashOf(variant)];
      expect(h1).not.toBe(h2);
      expect((await f.client.getRun(runId))!.definition_hash).toBe(h1);

      // b picks the recovered job up and leaves it for a worker with v1: nothing claimed, nothing run.
      await b.waitForLog(`leaving it for a worker with ${h1}`, 20_000);
      const waiting = (await f.client.getRun(runId))!;
      expect(waiting.status).toBe('RUNNING');
      expect(waiting.attempts.map((x) => x.worker_id)).toEqual(['a']);
      expect(waiting.definition_hash).toBe(h1);

      const failed = await f.client.waitForRun(runId, { timeoutMs: 30_000 });
      expect(failed.status).toBe('ERROR');
      expect(failed.error).toMatchObject({
        name: 'DefinitionChangedError',
        message: expect.stringContaining(`started on definition ${h1}, the workers have ${h2}`),
      });
      const errored = (await f.client.getRun(runId))!;
      expect(errored.attempts.map((x) => [x.worker_id, x.outcome])).toEqual([
        ['a', 'superseded'],
        ['b', 'error'],
      ]);

      const continued = await f.client.continueRun(runId, { upgrade: true });
      expect(continued).toMatchObject({ action: 'resume', run: { runId } });
      // The run is still ERROR until b claims the continue: wait for that claim to end.
      await waitFor(
        async () => {
          const view = await f.client.getRun(runId);
          return (view?.attempts.length ?? 0) === 3 && FINAL_STATUSES.includes(view!.status);
        },
        30_000,
        'the upgraded resume to end',
      );
      const view = (await f.client.getRun(runId))!;
      expect(view).toMatchObject({
        run_id: runId,
        status: 'COMPLETED',
        content: 'draft of 2 parts',
        definition_hash: h2,
      });
      expect(view.attempts.map((x) => [x.worker_id, x.reason])).toEqual([
        ['a', 'run'],
        ['b', 'recovered'],
        ['b', 'continue'],
      ]);
      const upgraded = await f.client.store.listEventsOfTypes(runId, ['DefinitionUpgraded']);
      expect(upgraded.map((e) => e.data)).toEqual([expect.objectContaining({ from: h1, to: h2 })]);
      // Resumed from the checkpoint: part 1, committed by a, was not drafted again.
      expect(view.tools.filter((t) => t.name === 'draft_step').map((t) => t.args)).toEqual([
        { part: 1 },
        { part: 2 },
      ]);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "a worker with the run's definition started during the grace period takes the run over and completes it",
    async () => {
      const { f, b, runId } = await runStartedThenOrphaned('schema', 60_000, QUICK_RECONCILER);
      await b.waitForLog(`leaving it for a worker with ${hashOf('v1')}`, 20_000);
      await spawn(f, 'c', 'v1', 60_000, QUICK_RECONCILER);
      const done = await f.client.waitForRun(runId, { timeoutMs: 40_000 });
      expect(done).toMatchObject({
        status: 'COMPLETED',
        content: 'draft of 2 parts',
        definitionHash: hashOf('v1'),
      });
      const view = (await f.client.getRun(runId))!;
      expect(view.attempts.map((x) => x.worker_id)).toEqual(['a', 'c']);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "an entity declaring onDefinitionChange: 'resume' is resumed on the new definition without asking",
    async () => {
      const { f, runId } = await runStartedThenOrphaned('prompt-resume', 60_000);
      const done = await f.client.waitForRun(runId, { timeoutMs: 30_000 });
      expect(done).toMatchObject({
        status: 'COMPLETED',
        content: 'draft of 2 parts',
        definitionHash: hashOf('prompt-resume'),
      });
      const view = (await f.client.getRun(runId))!;
      expect(view.attempts.map((x) => [x.worker_id, x.reason])).toEqual([
        ['a', 'run'],
        ['b', 'recovered'],
      ]);
      const upgraded = await f.client.store.listEventsOfTypes(runId, ['DefinitionUpgraded']);
      expect(upgraded.map((e) => e.data)).toEqual([
        expect.objectContaining({ from: hashOf('v1'), to: hashOf('prompt-resume') }),
      ]);
    },
    TEST_TIMEOUT_MS,
  );
});
