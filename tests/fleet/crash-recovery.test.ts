import { afterEach, describe, expect, it } from 'vitest';
import {
  allTools,
  FLEET_BACKEND,
  holderOf,
  RESEARCHER,
  startFleet,
  TEAM,
  waitFor,
  type Fleet,
} from './fleet.js';

/** SIGKILL→resumed times (ms), printed at the end for the report. */
const recoveryTimes: Record<string, number> = {};

describe(`SIGKILL a worker mid-run (${FLEET_BACKEND})`, () => {
  let fleet: Fleet | undefined;
  afterEach(async () => {
    await fleet?.stop();
    fleet = undefined;
  });

  async function killHolderWhen(
    runId: string,
    ready: (view: NonNullable<Awaited<ReturnType<Fleet['client']['getRun']>>>) => boolean,
  ) {
    const f = fleet!;
    let holder: string | undefined;
    await waitFor(
      async () => {
        const view = await f.client.getRun(runId);
        holder = holderOf(view);
        return view !== undefined && holder !== undefined && ready(view);
      },
      20_000,
      'the kill point',
    );
    const victim = f.workers.find((w) => w.id === holder)!;
    const killedAt = Date.now();
    victim.kill('SIGKILL');
    await victim.exited;
    return { victim: victim.id, killedAt };
  }

  function assertNoCommittedBatchRanTwice(f: Fleet, tools: ReturnType<typeof allTools>) {
    const ledger = f.ledger();
    for (const t of tools.filter(
      (t) => t.name !== 'delegate_task_to_member' && t.status === 'completed',
    )) {
      expect(ledger.get(t.idempotency_key), `${t.name} ${t.idempotency_key}`).toBe(1);
    }
  }

  it("team run: killed while its member is mid-way (after the member's first checkpoint); member resumes, not restarts", async () => {
    fleet = await startFleet({ backend: FLEET_BACKEND });
    await fleet.spawnWorker('a');
    await fleet.spawnWorker('b');
    const run = await fleet.client.enqueueRun({
      entity: TEAM,
      input: "Research 'cairns'",
      checkpoint: 'tool-batch',
    });
    const { victim, killedAt } = await killHolderWhen(
      run.runId,
      (v) => (v.member_runs[0]?.last_checkpoint_at_message_index ?? 0) >= 3,
    );
    const done = await fleet.client.waitForRun(run.runId, { timeoutMs: 30_000 });
    expect(done.status).toBe('COMPLETED');
    const view = (await fleet.client.getRun(run.runId))!;
    expect(view.run_id).toBe(run.runId);
    const recovered = view.attempts.find((a) => a.reason === 'recovered')!;
    expect(recovered.worker_id).not.toBe(victim);
    recoveryTimes.teamMemberMidway = new Date(recovered.started_at).getTime() - killedAt;
    expect(view.member_runs).toHaveLength(1);
    const member = view.member_runs[0]!;
    expect(member.attempts.length).toBeGreaterThanOrEqual(2);
    expect(allTools(view).filter((t) => t.name === 'slow_search')).toHaveLength(1);
    assertNoCommittedBatchRanTwice(fleet, allTools(view));
  });

  it('agent run: killed with its third tool batch in flight; committed batches are not redone, the in-flight one is', async () => {
    fleet = await startFleet({ backend: FLEET_BACKEND });
    await fleet.spawnWorker('a');
    await fleet.spawnWorker('b');
    const run = await fleet.client.enqueueRun({
      entity: RESEARCHER,
      input: "Research 'cairns'",
      checkpoint: 'tool-batch',
    });
    const { victim, killedAt } = await killHolderWhen(
      run.runId,
      (v) => v.last_checkpoint_at_message_index >= 5,
    );
    const done = await fleet.client.waitForRun(run.runId, { timeoutMs: 30_000 });
    expect(done.status).toBe('COMPLETED');
    const view = (await fleet.client.getRun(run.runId))!;
    const recovered = view.attempts.find((a) => a.reason === 'recovered')!;
    expect(recovered.worker_id).not.toBe(victim);
    recoveryTimes.agentThirdBatch = new Date(recovered.started_at).getTime() - killedAt;
    expect(view.tools.filter((t) => t.status === 'completed')).toHaveLength(4);
    assertNoCommittedBatchRanTwice(fleet, view.tools);
    console.log('SIGKILL→resumed (ms):', JSON.stringify(recoveryTimes));
  });
});
