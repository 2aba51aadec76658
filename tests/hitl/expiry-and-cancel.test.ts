import { afterAll, describe, it } from 'vitest';
import { DecisionConflictError } from '@cairn/engine';
import { waitFor } from '../fleet/fleet.js';
import {
  finished,
  OPS_AGENT,
  OPS_TEAM,
  pausedWith,
  startOpsFleet,
  toolMessages,
  type OpsFleet,
} from './hitl-fleet.js';

/**
 * The scenarios run side by side, each on a fleet with its workers' settings; scenarios whose
 * settings agree share one (their runs are independent by id, and none of them runs a restart, so
 * the ledger stays empty for all).
 */
const fleets = new Map<string, Promise<OpsFleet>>();
function fleetWith(env: Record<string, string>): Promise<OpsFleet> {
  const key = JSON.stringify(env);
  let fleet = fleets.get(key);
  if (!fleet) fleets.set(key, (fleet = startOpsFleet({ env })));
  return fleet;
}
afterAll(async () => {
  await Promise.allSettled([...fleets.values()].map(async (fleet) => (await fleet).stop()));
});

/**
 * Expiry rejecting by default, and a reconciler quick to find an expiry whose delayed job was lost:
 * the two 'reject' scenarios share it.
 */
const EXPIRING = {
  OPS_APPROVAL_TIMEOUT_MS: '3000',
  CAIRN_RECONCILE_INTERVAL_MS: '500',
  CAIRN_RECONCILE_AFTER_MS: '500',
};

describe.concurrent('expiry of a pending action', () => {
  it('onTimeout \'reject\' (the default): nobody decides, the call is rejected with "approval timed out" and the run goes on', async ({
    expect,
  }) => {
    const fleet = await fleetWith(EXPIRING);
    const run = await fleet.client.enqueueRun({ entity: OPS_TEAM, input: 'restart api' });
    const [action] = await pausedWith(fleet, run.runId, 1);
    expect(action!.expiresAt).toBeInstanceOf(Date);
    expect((await finished(fleet, run.runId)).status).toBe('COMPLETED');
    const view = (await fleet.client.getRun(run.runId))!;
    expect(toolMessages(view, 'restart_service')).toEqual([
      'A person rejected this call of tool "restart_service"; it was not run. Their message: approval timed out',
    ]);
    expect(await fleet.ledgerRows()).toEqual([]);
    const events = await fleet.client.listEvents(action!.runId);
    expect(events.filter((e) => e.type === 'ActionExpired').map((e) => e.data)).toMatchObject([
      { action_id: action!.actionId },
    ]);
  });

  it('an expiry whose delayed job was lost is applied by the reconciler, and the run goes on', async ({
    expect,
  }) => {
    const fleet = await fleetWith(EXPIRING);
    const run = await fleet.client.enqueueRun({ entity: OPS_AGENT, input: 'restart api' });
    const [action] = await pausedWith(fleet, run.runId, 1);
    // The queue loses the delayed `expire` job (a flushed Redis, or a worker that died before enqueuing it).
    const expireJobId = `expire-${action!.actionId}`;
    let expireJob: Awaited<ReturnType<typeof fleet.client.runQueue.queue.getJob>>;
    await waitFor(
      async () => (expireJob = await fleet.client.runQueue.queue.getJob(expireJobId)) !== undefined,
      10_000,
      expireJobId,
    );
    await expireJob!.remove();

    expect((await finished(fleet, run.runId)).status).toBe('COMPLETED');
    expect(await fleet.client.runQueue.queue.getJob(expireJobId)).toBeUndefined();
    const view = (await fleet.client.getRun(run.runId))!;
    expect(toolMessages(view, 'restart_service')).toEqual([
      'A person rejected this call of tool "restart_service"; it was not run. Their message: approval timed out',
    ]);
    expect(await fleet.ledgerRows()).toEqual([]);
    expect(
      (await fleet.client.listEvents(run.runId)).filter((e) => e.type === 'ActionExpired'),
    ).toHaveLength(1);
  });

  it("onTimeout 'error': the run ends in ERROR naming the action", async ({ expect }) => {
    const fleet = await fleetWith({ OPS_APPROVAL_TIMEOUT_MS: '1500', OPS_ON_TIMEOUT: 'error' });
    const run = await fleet.client.enqueueRun({ entity: OPS_AGENT, input: 'restart api' });
    const [action] = await pausedWith(fleet, run.runId, 1);
    const done = await finished(fleet, run.runId);
    expect(done.status).toBe('ERROR');
    expect(done.error).toMatchObject({
      name: 'ApprovalTimeoutError',
      message: expect.stringContaining(action!.actionId),
    });
    expect(await fleet.ledgerRows()).toEqual([]);
    await expect(
      fleet.client.decide(run.runId, [
        { actionId: action!.actionId, decision: { type: 'approve' } },
      ]),
    ).rejects.toThrow(/expired/);
  });
});

// Beside the expiry scenarios, on workers with no expiry: the actions stay pending until the cancel.
describe.concurrent('cancel while PAUSED', () => {
  it('cancels the team and its paused member; their pending actions become cancelled and cannot be decided', async ({
    expect,
  }) => {
    const fleet = await fleetWith({});
    const run = await fleet.client.enqueueRun({ entity: OPS_TEAM, input: 'restart api, db' });
    const actions = await pausedWith(fleet, run.runId, 2);
    const cancelled = await fleet.client.cancelRun(run.runId);
    expect(cancelled.status).toBe('CANCELLED');
    const view = (await fleet.client.getRun(run.runId))!;
    expect(view.member_runs.map((m) => m.status)).toEqual(['CANCELLED']);
    expect(view.pending_actions).toEqual([]);
    expect((await fleet.store.listRunActions(actions[0]!.runId)).map((a) => a.status)).toEqual([
      'cancelled',
      'cancelled',
    ]);
    await expect(
      fleet.client.decide(run.runId, [
        { actionId: actions[0]!.actionId, decision: { type: 'approve' } },
      ]),
    ).rejects.toThrow(DecisionConflictError);
    // A fixed window: the claim is that nothing runs the cancelled actions afterwards.
    await new Promise((r) => setTimeout(r, 1000));
    expect((await fleet.store.getRun(run.runId))?.status).toBe('CANCELLED');
    expect(await fleet.ledgerRows()).toEqual([]);
  });
});
