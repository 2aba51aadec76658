import { describe, it, type TestContext } from 'vitest';
import { actionIdempotencyKey } from '@cairn/engine';
import { holderOf, waitFor } from '../fleet/fleet.js';
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

/**
 * Each scenario has a fleet of its own (two SIGKILL a worker), and the three run side by side:
 * their processes start together, and each mostly waits on its run.
 */
async function ownFleet(
  { onTestFinished }: TestContext,
  options: Parameters<typeof startOpsFleet>[0],
): Promise<OpsFleet> {
  const fleet = await startOpsFleet(options);
  onTestFinished(() => fleet.stop());
  return fleet;
}

async function postDecisions(
  baseUrl: string,
  runId: string,
  decisions: unknown[],
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${baseUrl}/v1/runs/${runId}/decisions`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ decisions }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('a gated call executes at most once', () => {
  it.concurrent(
    'the same decision twice, two different decisions racing from two producer processes, a stale args_digest: one outcome',
    async (context) => {
      const { expect } = context;
      const fleet = await ownFleet(context, { producers: 2 });
      const [p1, p2] = [fleet.producers[0]!, fleet.producers[1]!];
      const run = await fleet.client.enqueueRun({ entity: OPS_TEAM, input: 'restart api' });
      const [action] = await pausedWith(fleet, run.runId, 1);
      const id = action!.actionId;

      const stale = await postDecisions(p1.baseUrl, run.runId, [
        { action_id: id, type: 'approve', args_digest: 'f'.repeat(64) },
      ]);
      expect(stale.status).toBe(412);
      const raced = await Promise.all([
        postDecisions(p1.baseUrl, run.runId, [
          { action_id: id, type: 'approve', args_digest: action!.argsDigest },
        ]),
        postDecisions(p2.baseUrl, action!.runId, [
          { action_id: id, type: 'reject', message: 'no' },
        ]),
      ]);
      expect(raced.map((r) => r.status).sort()).toEqual([200, 409]);
      const winner = raced[0]!.status === 200 ? 'approve' : 'reject';
      const again = await postDecisions(p2.baseUrl, run.runId, [
        winner === 'approve'
          ? { action_id: id, type: 'approve' }
          : { action_id: id, type: 'reject', message: 'no' },
      ]);
      expect(again).toMatchObject({ status: 200, body: { applied: [], already_decided: [id] } });

      expect((await finished(fleet, run.runId)).status).toBe('COMPLETED');
      const twice = await postDecisions(p1.baseUrl, run.runId, [
        winner === 'approve'
          ? { action_id: id, type: 'approve' }
          : { action_id: id, type: 'reject', message: 'no' },
      ]);
      expect(twice).toMatchObject({ status: 200, body: { already_decided: [id] } });
      const rows = await fleet.ledgerRows();
      expect(rows).toHaveLength(winner === 'approve' ? 1 : 0);
      const view = (await fleet.client.getRun(run.runId))!;
      expect(toolMessages(view, 'restart_service')).toEqual([
        winner === 'approve'
          ? 'restarted api'
          : 'A person rejected this call of tool "restart_service"; it was not run. Their message: no',
      ]);
      console.log(`ledger (race): ${winner} won, restart_service executions: ${rows.length}`);
    },
  );

  it.concurrent(
    'SIGKILL right after an approved tool finished, and before the next approved one ran: each executed once',
    async (context) => {
      const { expect } = context;
      const fleet = await ownFleet(context, {
        workers: 2,
        env: { OPS_HOLD_AFTER_RESTART_MS: '4000' },
      });
      const run = await fleet.client.enqueueRun({ entity: OPS_AGENT, input: 'restart api, db' });
      const actions = await pausedWith(fleet, run.runId, 2);
      const byService = new Map(
        actions.map((a) => [(a.args as { service: string }).service, a.actionId]),
      );
      await fleet.client.decide(run.runId, [
        { actionId: byService.get('api')!, decision: { type: 'approve' } },
      ]);
      await fleet.client.decide(run.runId, [
        { actionId: byService.get('db')!, decision: { type: 'approve' } },
      ]);
      // api has restarted (its ledger row is written) and its call is still open; db is decided but not yet run.
      // The resume is picked up, claimed and run: on a loaded machine (two suites at once) that took
      // over 20 s, so the wait gets the ceiling the other fleet waits have.
      await waitFor(
        async () => (await fleet.ledgerRows()).length === 1,
        60_000,
        'the first approved restart',
      );
      const holder = holderOf(await fleet.client.getRun(run.runId));
      const victim = fleet.workers.find((w) => w.id === holder)!;
      victim.kill('SIGKILL');
      await victim.exited;

      expect((await finished(fleet, run.runId)).status).toBe('COMPLETED');
      const rows = await fleet.ledgerRows();
      expect(rows.map((r) => [r.args.service, r.idempotency_key])).toEqual([
        ['api', actionIdempotencyKey(byService.get('api')!)],
        ['db', actionIdempotencyKey(byService.get('db')!)],
      ]);
      const view = (await fleet.client.getRun(run.runId))!;
      expect(view.attempts.map((a) => a.reason)).toEqual(['run', 'continue', 'recovered']);
      const messages = toolMessages(view, 'restart_service');
      expect(messages).toContain('restarted db');
      expect(messages.find((m) => m.includes('"api"'))).toMatch(
        /was started after its approval .* it was not run again/,
      );
      expect(callsWithoutResult(view)).toEqual([]);
      console.log(
        `ledger (SIGKILL): ${rows.map((r) => r.args.service).join(', ')} executed once each`,
      );
    },
    // Its own fleet of two workers, a resume and a takeover after a SIGKILL: processes on a loaded machine.
    120_000,
  );

  it.concurrent(
    'SIGKILL of the worker holding the resume right after the decision: the approved call runs once on another worker',
    async (context) => {
      const { expect } = context;
      const fleet = await ownFleet(context, { workers: 2 });
      const run = await fleet.client.enqueueRun({ entity: OPS_TEAM, input: 'restart api' });
      const [action] = await pausedWith(fleet, run.runId, 1);
      // Kill a worker while the run is paused (it holds nothing), then decide and kill whichever worker picks the resume.
      fleet.workers[0]!.kill('SIGKILL');
      await fleet.workers[0]!.exited;
      await fleet.spawnWorker('w3', fleet.workerEnv);
      await fleet.client.decide(run.runId, [
        { actionId: action!.actionId, decision: { type: 'approve' } },
      ]);
      const done = await finished(fleet, run.runId);
      expect(done.status).toBe('COMPLETED');
      expect((await fleet.ledgerRows()).map((r) => r.args.service)).toEqual(['api']);
    },
  );
});
