import { createRegistry as opsRegistry } from '@cairn/ops-agent';
import { createRegistry as researchRegistry } from '@cairn/research-team';
import { Engine, type ActionDecision, type Registry } from '@cairn/engine';
import { exportRun, replayRun } from '@cairn/engine/testing';
import { validateDecision } from '@cairn/engine/store';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openTestStore, type TestStore } from '../helpers/test-store.js';

// Every example's runs, made for real on the store with its scripted models, replay clean on the same code.

process.env.RESEARCH_TOOL_DELAY_MS = '0';
process.env.RESEARCH_MODEL_LATENCY_MS = '0';

let t: TestStore;
beforeEach(async () => {
  t = await openTestStore();
});
afterEach(() => t.close());

/** Creates and executes a run; each decision set is applied to the paused run before it resumes. */
async function storedRun(
  registry: Registry,
  entity: { kind: 'agent' | 'team'; name: string },
  input: string,
  options: { checkpoint?: 'run' | 'tool-batch' | 'tool-call'; decide?: ActionDecision[] } = {},
): Promise<string> {
  const engine = new Engine({ store: t.store, registry, workerId: 'replay-test' });
  const run = await engine.createRun({
    entity,
    input,
    ...(options.checkpoint && { checkpoint: options.checkpoint }),
  });
  await engine.execute(run.runId, { reason: 'run' });
  for (const decision of options.decide ?? []) {
    const view = (await t.store.getRunView(run.runId))!;
    expect(view.status).toBe('PAUSED');
    for (const action of view.pending_actions)
      await t.store.decideActions(
        run.runId,
        [{ actionId: action.action_id, decision }],
        validateDecision,
      );
    await engine.execute(run.runId, { reason: 'continue', from: ['PAUSED'] });
  }
  return run.runId;
}

describe('replay of the examples', () => {
  it.each(['run', 'tool-batch', 'tool-call'] as const)(
    'research-team in %s mode: the team and its researcher replay clean',
    async (checkpoint) => {
      const registry = researchRegistry({ scriptedLatencyMs: 0 });
      const runId = await storedRun(
        registry,
        { kind: 'team', name: 'research-team' },
        "Research the topic 'cairn replay'.",
        { checkpoint },
      );
      expect((await t.store.getRun(runId))!.status).toBe('COMPLETED');
      // The team's 2 turns and 1 delegation, the researcher's 5 turns and 4 tool calls.
      expect(await replayRun(registry, await exportRun(t.store, runId))).toEqual({
        ok: true,
        turns: 7,
        toolCalls: 5,
      });
    },
  );

  const OPS_AGENT = { kind: 'agent', name: 'ops-agent' } as const;
  const OPS_TEAM = { kind: 'team', name: 'ops-team' } as const;
  it.each<[string, string, ActionDecision]>([
    ['approved', 'restart api, web', { type: 'approve' }],
    ['edited', 'restart api', { type: 'edit', args: { service: 'api-canary' } }],
    ['rejected', 'restart api', { type: 'reject', message: 'not now' }],
    ['answered (external)', 'ask which service?', { type: 'result', output: 'web' }],
  ])('ops-agent with its gated calls %s replays clean', async (_name, input, decision) => {
    const registry = opsRegistry();
    const runId = await storedRun(registry, OPS_AGENT, input, { decide: [decision] });
    expect((await t.store.getRun(runId))!.status).toBe('COMPLETED');
    const result = await replayRun(registry, await exportRun(t.store, runId));
    expect(result).toMatchObject({ ok: true, turns: 2 });
  });

  it('ops-team whose member paused for approval replays the member too', async () => {
    const registry = opsRegistry();
    const runId = await storedRun(registry, OPS_TEAM, 'restart api', {
      decide: [{ type: 'approve' }],
    });
    expect((await t.store.getRun(runId))!.status).toBe('COMPLETED');
    // The team's 2 turns and delegation, the agent's 2 turns and 2 calls (check_status, restart_service).
    expect(await replayRun(registry, await exportRun(t.store, runId))).toEqual({
      ok: true,
      turns: 4,
      toolCalls: 3,
    });
  });

  it('a run still waiting for a person replays up to its pause', async () => {
    const registry = opsRegistry();
    const runId = await storedRun(registry, OPS_AGENT, 'restart api');
    expect((await t.store.getRun(runId))!.status).toBe('PAUSED');
    expect(await replayRun(registry, await exportRun(t.store, runId))).toEqual({
      ok: true,
      turns: 1,
      toolCalls: 1,
    });
  });
});
