import { Conflict, createClient } from '@cairn/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  finished,
  ledgerFromNow,
  OPS_AGENT,
  OPS_TEAM,
  startOpsFleet,
  type OpsFleet,
} from '../hitl/hitl-fleet.js';

// One database, queue, client, worker and producer for both scenarios: runs are independent by id,
// each test waits for its run to end, and reads the ledger rows written since it began.
let fleet: OpsFleet;
let cairn: ReturnType<typeof createClient>;
beforeAll(async () => {
  fleet = await startOpsFleet({ producers: 1 });
  cairn = createClient({ baseUrl: fleet.producers[0]!.baseUrl });
});
afterAll(() => fleet?.stop());

it('runs.wait returns a run PAUSED for a decision, runs.decide approves it once, and the run completes', async () => {
  const ledgerRows = await ledgerFromNow(fleet);
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

  // No worker until the decisions are in: the decided run stays PAUSED, its actions all decided,
  // until one starts. A wait begun then waits for its end (it used to answer with the run PAUSED).
  await fleet.stopWorkers();
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

  const waiting = cairn.runs.wait(run_id, { timeoutMs: 60_000 });
  await fleet.spawnWorker('w2', fleet.workerEnv);
  const done = await waiting;
  expect(done.status).toBe('COMPLETED');
  expect((await ledgerRows()).map((row) => row.args.service)).toEqual(['api']);
});

describe('the event stream of a paused run', () => {
  it('stays open while PAUSED; @cairn/client decides from RunPaused; ActionDecided, RunContinued and RunCompleted follow', async () => {
    const ledgerRows = await ledgerFromNow(fleet);
    const { run_id: runId } = await cairn.runs.create({ ...OPS_TEAM, input: 'restart api' });
    // The team's own events (its member's are in its stream too, marked by `member`).
    const seen: string[] = [];
    const ofMember: string[] = [];
    let decision: unknown;
    for await (const event of cairn.runs.events(runId)) {
      if (event.member) {
        ofMember.push(event.type);
        continue;
      }
      seen.push(event.type);
      if (event.type === 'RunPaused') {
        const [action] = event.data.actions as {
          action_id: string;
          args_digest: string;
          member_path: string[];
          tool: string;
        }[];
        expect(action).toMatchObject({
          tool: 'restart_service',
          member_path: ['ops-team', 'ops-agent'],
        });
        decision = await cairn.runs.decide(runId, [
          { action_id: action!.action_id, type: 'approve', args_digest: action!.args_digest },
        ]);
      }
    }
    expect(decision).toMatchObject({
      applied: [expect.stringMatching(/^act_/)],
      already_decided: [],
      pending: 0,
    });
    expect(seen.indexOf('RunPaused')).toBeGreaterThan(-1);
    expect(seen.indexOf('ActionDecided')).toBeGreaterThan(seen.indexOf('RunPaused'));
    expect(seen.lastIndexOf('RunContinued')).toBeGreaterThan(seen.indexOf('ActionDecided'));
    expect(seen.at(-1)).toBe('RunCompleted');
    expect(seen.filter((t) => t === 'RunCompleted')).toHaveLength(1);
    // The member's own run: its tool call, once approved, and its end; the decision shows once, as the team's.
    expect(ofMember).toContain('ToolCallCompleted');
    expect(ofMember.at(-1)).toBe('RunCompleted');
    expect([...seen, ...ofMember].filter((t) => t === 'ActionDecided')).toHaveLength(1);
    expect((await finished(fleet, runId)).status).toBe('COMPLETED');
    expect((await ledgerRows()).map((r) => r.args.service)).toEqual(['api']);
  });
});
