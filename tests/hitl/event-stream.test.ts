import { afterEach, describe, expect, it } from 'vitest';
import { createClient } from '@cairn/client';
import { finished, OPS_TEAM, startOpsFleet, type OpsFleet } from './hitl-fleet.js';

let fleet: OpsFleet | undefined;
afterEach(async () => {
  await fleet?.stop();
  fleet = undefined;
});

describe('the event stream of a paused run', () => {
  it('stays open while PAUSED; @cairn/client decides from RunPaused; ActionDecided, RunContinued and RunCompleted follow', async () => {
    fleet = await startOpsFleet();
    const producer = await fleet.spawnProducer('p1');
    const cairn = createClient({ baseUrl: producer.baseUrl });
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
    expect((await fleet.ledgerRows()).map((r) => r.args.service)).toEqual(['api']);
  });
});
