import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { actionIdempotencyKey, type ActionDecision } from '@cairn/engine';
import { waitFor } from '../fleet/fleet.js';
import {
  callsWithoutResult,
  finished,
  ledgerFromNow,
  OPS_AGENT,
  OPS_TEAM,
  pausedWith,
  startOpsFleet,
  toolMessages,
  type OpsFleet,
} from './hitl-fleet.js';

// One database, queue, client and worker for every scenario: runs are independent by id, each
// test waits for its run to end, and the ledger is read from the rows written since the test began.
let fleet: OpsFleet;
beforeAll(async () => {
  fleet = await startOpsFleet();
});
afterAll(() => fleet?.stop());

/** The ledger rows written since the test began (rows are ordered by time). */
let ledgerRows: OpsFleet['ledgerRows'];
beforeEach(async () => {
  ledgerRows = await ledgerFromNow(fleet);
});

interface Case {
  name: string;
  input: string;
  decision: ActionDecision;
  /** What the model got as the gated call's tool message. */
  message: string;
  tool: 'restart_service' | 'ask_operator';
  /** The restarts the ledger holds afterwards. */
  restarted: string[];
}

const CASES: Case[] = [
  {
    name: 'approve',
    input: 'restart api',
    decision: { type: 'approve' },
    tool: 'restart_service',
    message: 'restarted api',
    restarted: ['api'],
  },
  {
    name: 'edit',
    input: 'restart api',
    decision: { type: 'edit', args: { service: 'api-canary' } },
    tool: 'restart_service',
    message:
      'A person edited the arguments before the call ran; it ran with {"service":"api-canary"}.\n\nrestarted api-canary',
    restarted: ['api-canary'],
  },
  {
    name: 'reject',
    input: 'restart api',
    decision: { type: 'reject', message: 'not during peak hours' },
    tool: 'restart_service',
    message:
      'A person rejected this call of tool "restart_service"; it was not run. Their message: not during peak hours',
    restarted: [],
  },
  {
    name: 'external result',
    input: 'ask which service should be restarted?',
    decision: { type: 'result', output: 'restart the cache, not the api' },
    tool: 'ask_operator',
    message: 'restart the cache, not the api',
    restarted: [],
  },
];

describe.each([
  ['an agent', OPS_AGENT, ['ops-agent']],
  ['a team member', OPS_TEAM, ['ops-team', 'ops-agent']],
] as const)('human in the loop on %s', (_label, entity, memberPath) => {
  it.each(CASES)(
    '$name: the run pauses holding no job, resumes once decided, and the model sees the right tool message',
    async (c) => {
      const run = await fleet.client.enqueueRun({ entity, input: c.input });
      const [action] = await pausedWith(fleet, run.runId, 1);
      expect(action).toMatchObject({
        tool: c.tool,
        kind: c.tool === 'ask_operator' ? 'external' : 'approval',
        memberPath: [...memberPath],
        status: 'pending',
      });
      // Its job completes: a paused run holds no worker and no job slot.
      await waitFor(
        async () => !(await fleet.runQueueLiveJob(run.runId)),
        5_000,
        'the paused run to hold no job',
      );
      const paused = (await fleet.client.getRun(run.runId))!;
      expect(paused.pending_actions.map((a) => a.action_id)).toEqual([action!.actionId]);
      if (c.tool === 'restart_service')
        expect(toolMessages(paused, 'check_status')).toEqual(['api: degraded (p99 latency 4.2 s)']);
      expect(await ledgerRows()).toEqual([]);

      const result = await fleet.client.decide(run.runId, [
        { actionId: action!.actionId, decision: c.decision },
      ]);
      expect(result).toMatchObject({ applied: [action!.actionId], pending: 0 });
      expect((await finished(fleet, run.runId)).status).toBe('COMPLETED');

      const view = (await fleet.client.getRun(run.runId))!;
      expect(toolMessages(view, c.tool)).toEqual([c.message]);
      expect(view.content).toContain(`- ${c.tool}: ${c.message.split('\n')[0]}`);
      expect(callsWithoutResult(view)).toEqual([]);
      expect(view.member_runs).toHaveLength(entity.kind === 'team' ? 1 : 0);
      const rows = await ledgerRows();
      expect(rows.map((r) => r.args.service)).toEqual(c.restarted);
      for (const row of rows)
        expect(row.idempotency_key).toBe(actionIdempotencyKey(action!.actionId));
      const events = await fleet.client.listEvents(action!.runId);
      expect(events.map((e) => e.type)).toEqual(
        expect.arrayContaining(['RunPaused', 'ActionDecided', 'RunContinued', 'RunCompleted']),
      );
    },
  );
});

describe('partial decisions', () => {
  it('three gated calls of one batch: the run resumes only after the third decision, each call executed once, in the order decided', async () => {
    const run = await fleet.client.enqueueRun({
      entity: OPS_AGENT,
      input: 'restart api, db, cache',
    });
    const actions = await pausedWith(fleet, run.runId, 3);
    const byService = new Map(
      actions.map((a) => [(a.args as { service: string }).service, a.actionId]),
    );
    for (const [i, service] of ['cache', 'api'].entries()) {
      const result = await fleet.client.decide(run.runId, [
        { actionId: byService.get(service)!, decision: { type: 'approve' } },
      ]);
      expect(result).toMatchObject({ pending: 2 - i, status: 'PAUSED' });
      // A fixed window: the claim is that the run does NOT resume before its last decision.
      await new Promise((r) => setTimeout(r, 500));
      expect((await fleet.store.getRun(run.runId))?.status).toBe('PAUSED');
      expect(await fleet.runQueueLiveJob(run.runId)).toBe(false);
    }
    expect(await ledgerRows()).toEqual([]);
    await fleet.client.decide(run.runId, [
      { actionId: byService.get('db')!, decision: { type: 'approve' } },
    ]);
    expect((await finished(fleet, run.runId)).status).toBe('COMPLETED');
    const rows = await ledgerRows();
    expect(rows.map((r) => r.args.service)).toEqual(['cache', 'api', 'db']);
    expect(new Set(rows.map((r) => r.idempotency_key)).size).toBe(3);
    const view = (await fleet.client.getRun(run.runId))!;
    expect(toolMessages(view, 'restart_service').sort()).toEqual([
      'restarted api',
      'restarted cache',
      'restarted db',
    ]);
    expect(callsWithoutResult(view)).toEqual([]);
  });
});

describe('every checkpoint mode', () => {
  it.each(['run', 'tool-batch', 'tool-call'] as const)(
    '%s: the pause commits the turn, the ungated result and the actions; the resume completes the history',
    async (checkpoint) => {
      const run = await fleet.client.enqueueRun({
        entity: OPS_AGENT,
        input: 'restart api, db',
        checkpoint,
      });
      const actions = await pausedWith(fleet, run.runId, 2);
      const paused = (await fleet.client.getRun(run.runId))!;
      expect(paused.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
      expect(paused.last_checkpoint_at_message_index).toBe(3);
      await fleet.client.decide(
        run.runId,
        actions.map((a) => ({ actionId: a.actionId, decision: { type: 'approve' as const } })),
      );
      expect((await finished(fleet, run.runId)).status).toBe('COMPLETED');
      const view = (await fleet.client.getRun(run.runId))!;
      expect(callsWithoutResult(view)).toEqual([]);
      expect(view.tools.map((t) => t.status)).toEqual(['completed', 'completed', 'completed']);
      expect((await ledgerRows()).map((r) => r.args.service).sort()).toEqual(['api', 'db']);
    },
  );
});
