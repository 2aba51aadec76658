import { Conflict, createClient } from '@cairn/client';
import { afterEach, expect, it } from 'vitest';
import { OPS_AGENT, startOpsFleet, type OpsFleet } from '../hitl/hitl-fleet.js';

let fleet: OpsFleet | undefined;
afterEach(async () => {
  await fleet?.stop();
  fleet = undefined;
});

it('runs.wait returns a run PAUSED for a decision, runs.decide approves it once, and the run completes', async () => {
  fleet = await startOpsFleet();
  const producer = await fleet.spawnProducer('producer');
  const cairn = createClient({ baseUrl: producer.baseUrl });
  const { run_id } = await cairn.runs.create({ ...OPS_AGENT, input: 'restart api' });

  const paused = await cairn.runs.wait(run_id, { timeoutMs: 30_000 });
  expect(paused.status).toBe('PAUSED');
  expect(paused.pending_actions).toHaveLength(1);
  const action = paused.pending_actions[0]!;
  expect(action).toMatchObject({
    kind: 'approval',
    tool: 'restart_service',
    args: { service: 'api' },
  });

  const decided = await cairn.runs.decide(run_id, [
    { action_id: action.action_id, type: 'approve', args_digest: action.args_digest },
  ]);
  expect(decided).toMatchObject({ applied: [action.action_id], already_decided: [], pending: 0 });
  const again = await cairn.runs.decide(run_id, [{ action_id: action.action_id, type: 'approve' }]);
  expect(again.already_decided).toEqual([action.action_id]);
  const other = await cairn.runs
    .decide(run_id, [{ action_id: action.action_id, type: 'reject', message: 'no' }])
    .catch((error: unknown) => error);
  expect(other).toBeInstanceOf(Conflict);
  expect((other as Conflict).status).toBe(409);

  const done = await cairn.runs.wait(run_id, { timeoutMs: 30_000 });
  expect(done.status).toBe('COMPLETED');
  expect((await fleet.ledgerRows()).map((row) => row.args.service)).toEqual(['api']);
});
