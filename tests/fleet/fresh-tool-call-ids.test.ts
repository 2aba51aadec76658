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

/** Workers whose scripted models return new tool-call ids on every request, as a real model does. */
const FRESH = { RESEARCH_TOOL_CALL_IDS: 'fresh' };

let fleet: Fleet | undefined;
afterEach(async () => {
  await fleet?.stop();
  fleet = undefined;
});

async function killHolderWhen(
  f: Fleet,
  runId: string,
  ready: (view: NonNullable<Awaited<ReturnType<Fleet['client']['getRun']>>>) => boolean,
) {
  let holder: string | undefined;
  let seen: Awaited<ReturnType<Fleet['client']['getRun']>>;
  await waitFor(
    async () => {
      seen = await f.client.getRun(runId);
      holder = holderOf(seen);
      return seen !== undefined && holder !== undefined && ready(seen);
    },
    20_000,
    'the kill point',
  );
  const victim = f.workers.find((w) => w.id === holder)!;
  victim.kill('SIGKILL');
  await victim.exited;
  return seen!;
}

/** Executions per idempotency key, from the ledger every tool writes. */
function executions(f: Fleet): number[] {
  return [...f.ledger().values()];
}

describe(`SIGKILL under a model with fresh tool-call ids (${FLEET_BACKEND})`, () => {
  it('tool-call mode: no finished call is executed again after the kill', async () => {
    fleet = await startFleet({ backend: FLEET_BACKEND });
    const f = fleet;
    await f.spawnWorker('a', FRESH);
    await f.spawnWorker('b', FRESH);
    const run = await f.client.enqueueRun({
      entity: RESEARCHER,
      input: "Research 'cairns'",
      checkpoint: 'tool-call',
    });
    const atKill = await killHolderWhen(f, run.runId, (v) =>
      v.tools.some((t) => t.name === 'slow_fetch_detail' && t.status === 'running'),
    );
    const finishedAtKill = atKill.tools.filter((t) => t.status === 'completed');
    expect(finishedAtKill.length).toBeGreaterThanOrEqual(1);
    const done = await f.client.waitForRun(run.runId, { timeoutMs: 30_000 });
    expect(done.status).toBe('COMPLETED');
    const view = (await f.client.getRun(run.runId))!;
    expect(view.tools.filter((t) => t.status === 'completed').map((t) => t.name)).toEqual([
      'slow_search',
      'slow_fetch_detail',
      'slow_fetch_detail',
      'slow_fetch_detail',
    ]);
    // Finished calls keep their stored ids and are reused: each ran exactly once.
    const ledger = f.ledger();
    for (const t of finishedAtKill) expect(ledger.get(t.idempotency_key), t.name).toBe(1);
    // The call in flight ran again under its stored id (same idempotency key), not under a new one.
    expect(view.tools.map((t) => t.tool_call_id).slice(0, atKill.tools.length)).toEqual(
      atKill.tools.map((t) => t.tool_call_id),
    );
    expect(view.tools.every((t) => t.status !== 'running')).toBe(true);
  });

  it('tool-batch mode: at most the batch in flight is executed again (under new ids)', async () => {
    fleet = await startFleet({ backend: FLEET_BACKEND });
    const f = fleet;
    await f.spawnWorker('a', FRESH);
    await f.spawnWorker('b', FRESH);
    const run = await f.client.enqueueRun({
      entity: RESEARCHER,
      input: "Research 'cairns'",
      checkpoint: 'tool-batch',
    });
    await killHolderWhen(f, run.runId, (v) => v.last_checkpoint_at_message_index >= 5);
    const done = await f.client.waitForRun(run.runId, { timeoutMs: 30_000 });
    expect(done.status).toBe('COMPLETED');
    const view = (await f.client.getRun(run.runId))!;
    const completed = view.tools.filter((t) => t.status === 'completed');
    expect(completed).toHaveLength(4);
    const ledger = f.ledger();
    for (const t of completed) expect(ledger.get(t.idempotency_key), t.name).toBe(1);
    // Executions not in the history: the one-call batch the kill interrupted, at most.
    expect(executions(f).reduce((a, b) => a + b, 0) - completed.length).toBeLessThanOrEqual(1);
  });

  it('team: a kill while the member works resumes the same member run; nothing is delegated twice', async () => {
    fleet = await startFleet({ backend: FLEET_BACKEND });
    const f = fleet;
    await f.spawnWorker('a', FRESH);
    await f.spawnWorker('b', FRESH);
    const run = await f.client.enqueueRun({
      entity: TEAM,
      input: "Research 'cairns'",
      checkpoint: 'tool-batch',
    });
    await killHolderWhen(
      f,
      run.runId,
      (v) => (v.member_runs[0]?.last_checkpoint_at_message_index ?? 0) >= 3,
    );
    const done = await f.client.waitForRun(run.runId, { timeoutMs: 30_000 });
    expect(done.status).toBe('COMPLETED');
    const view = (await f.client.getRun(run.runId))!;
    expect(view.member_runs).toHaveLength(1);
    expect(view.tools.filter((t) => t.name === 'delegate_task_to_member')).toHaveLength(1);
    expect(allTools(view).filter((t) => t.name === 'slow_search')).toHaveLength(1);
    for (const t of allTools(view).filter(
      (t) => t.name !== 'delegate_task_to_member' && t.status === 'completed',
    )) {
      expect(f.ledger().get(t.idempotency_key), t.name).toBe(1);
    }
  });
});
