import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { actionIdempotencyKey, type ActionDecision } from '@cairn/engine';
import { FLEET_BACKEND, waitFor, type SpawnedWorker } from '../fleet/fleet.js';
import {
  callsWithoutResult,
  finished,
  OPS_AGENT,
  OPS_TEAM,
  pausedWith,
  startOpsFleet,
  toolMessages,
  type OpsFleet,
} from './hitl-fleet.js';
import { opsRegistryOf } from './ops-deploy-registry.js';

const OPS_DEPLOY_REGISTRY = fileURLToPath(new URL('./ops-deploy-registry.ts', import.meta.url));

/**
 * Longer than a job's own retries (5 attempts, 1 s exponential backoff: about
 * 15 s), so the run outlives its resume job and the reconciler must bring it back.
 */
const GRACE_MS = 20_000;
const QUICK_RECONCILER = { CAIRN_RECONCILE_INTERVAL_MS: '500', CAIRN_RECONCILE_AFTER_MS: '500' };

const CASES = [
  {
    name: 'an agent, approved',
    entity: OPS_AGENT,
    input: 'restart api',
    decision: { type: 'approve' },
    tool: 'restart_service',
    message: 'restarted api',
    restarted: ['api'],
  },
  {
    name: 'a team member, approved',
    entity: OPS_TEAM,
    input: 'restart api',
    decision: { type: 'approve' },
    tool: 'restart_service',
    message: 'restarted api',
    restarted: ['api'],
  },
  {
    name: 'an agent, external result',
    entity: OPS_AGENT,
    input: 'ask which service?',
    decision: { type: 'result', output: 'the cache' },
    tool: 'ask_operator',
    message: 'the cache',
    restarted: [],
  },
] as const;

// One database, queue and client; the cases run side by side (each mostly waits out the grace
// period) and share one deploy: their runs pause on the old worker (v1), which is then SIGKILLed
// (its graceful stop is not under test; a paused run holds no job) for a new one serving v2.
let f: OpsFleet;
let old: SpawnedWorker;
beforeAll(async () => {
  f = await startOpsFleet({ workers: 0, registryModule: OPS_DEPLOY_REGISTRY });
  old = await f.spawnWorker('old', { ...f.workerEnv, OPS_DEFINITION: 'v1' });
});
afterAll(() => f?.stop());

let pausedCases = 0;
let deployed: Promise<SpawnedWorker> | undefined;
let allPaused: { resolve(): void; reject(error: unknown): void };
const paused = new Promise<void>((resolve, reject) => (allPaused = { resolve, reject }));
// A case that fails before its pause fails the others at once, through `paused`, not at their timeout.
paused.catch(() => undefined);

/** Waits until every case's run has paused on v1, then deploys v2 once; resolves to the new worker. */
function deployOnceAllPaused(): Promise<SpawnedWorker> {
  if (++pausedCases === CASES.length) allPaused.resolve();
  deployed ??= paused.then(async () => {
    // The deploy: the old workers are gone, the new ones serve v2. The runs paused an hour before anyone decided.
    old.kill('SIGKILL');
    await old.exited;
    const latest = await f.spawnWorker('new', {
      ...f.workerEnv,
      ...QUICK_RECONCILER,
      OPS_DEFINITION: 'v2',
      CAIRN_VERSION_GRACE_MS: String(GRACE_MS),
    });
    await f.store.db
      .updateTable('runs')
      .set({ updated_at: new Date(Date.now() - 3_600_000) })
      .execute();
    return latest;
  });
  return deployed;
}

/** The ledger rows of one run's tree: its action's, or keyed by the run or the member run that paused. */
async function ledgerRowsOf(runId: string, action: { runId: string; actionId: string }) {
  return (await f.ledgerRows()).filter(
    (r) =>
      r.idempotency_key === actionIdempotencyKey(action.actionId) ||
      [runId, action.runId].some((id) => r.idempotency_key.startsWith(`${id}:`)),
  );
}

describe(`a paused run decided after a deploy changed its definition (${FLEET_BACKEND})`, () => {
  it.concurrent.for(CASES)(
    '$name: left for the grace period counted from the decision, then ERROR; continue { upgrade: true } applies the decision once and completes it',
    { timeout: 90_000 },
    async ({ entity, input, decision, tool, message, restarted }, { expect }) => {
      const [v1, v2] = [
        opsRegistryOf('v1').describe(entity)!.definitionHash!,
        opsRegistryOf('v2').describe(entity)!.definitionHash!,
      ];
      let run, action;
      try {
        run = await f.client.enqueueRun({ entity, input });
        [action] = await pausedWith(f, run.runId, 1);
        expect((await f.client.getRun(run.runId))!.definition_hash).toBe(v1);
      } catch (error) {
        allPaused.reject(error);
        throw error;
      }
      const latest = await deployOnceAllPaused();
      await f.client.decide(run.runId, [
        { actionId: action!.actionId, decision: decision as ActionDecision },
      ]);

      // The line names the run: the other cases' runs log theirs.
      await latest.waitForLog(`run ${run.runId}: started on definition ${v1}`, 20_000);
      expect((await f.store.getRun(run.runId))!.status).toBe('PAUSED');
      const failed = await finished(f, run.runId);
      expect(failed.status).toBe('ERROR');
      expect(failed.error).toMatchObject({
        name: 'DefinitionChangedError',
        message: expect.stringContaining(`started on definition ${v1}, the workers have ${v2}`),
      });
      expect(await ledgerRowsOf(run.runId, action!)).toEqual([]);

      await f.client.continueRun(run.runId, { upgrade: true });
      await waitFor(
        async () => (await f.store.getRun(run.runId))?.status === 'COMPLETED',
        30_000,
        'the upgraded run to complete',
      );
      const view = (await f.client.getRun(run.runId))!;
      expect(view.definition_hash).toBe(v2);
      expect(toolMessages(view, tool)).toEqual([message]);
      expect(callsWithoutResult(view)).toEqual([]);
      const rows = await ledgerRowsOf(run.runId, action!);
      expect(rows.map((r) => r.args.service)).toEqual([...restarted]);
      for (const row of rows)
        expect(row.idempotency_key).toBe(actionIdempotencyKey(action!.actionId));
    },
  );
});
