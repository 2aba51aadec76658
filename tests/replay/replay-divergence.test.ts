import {
  askOperator,
  checkStatus,
  createRegistry as opsRegistry,
  opsScript,
} from '@cairn/ops-agent';
import {
  createRegistry as researchRegistry,
  researcherScript,
  teamScript,
} from '@cairn/research-team';
import { Agent, Engine, Registry, Team, tool, type Tool } from '@cairn/engine';
import {
  describeReplay,
  exportRun,
  replayRun,
  ScriptedModel,
  type RunExport,
} from '@cairn/engine/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { openTestStore, type TestStore } from '../helpers/test-store.js';

// Runs stored by the examples, replayed against registries whose code changed since: the first
// divergence names the turn, the tool and the field.

process.env.RESEARCH_TOOL_DELAY_MS = '0';
process.env.RESEARCH_MODEL_LATENCY_MS = '0';

let t: TestStore;
let research: RunExport;
let ops: RunExport;
beforeAll(async () => {
  t = await openTestStore();
  research = await executed(
    researchRegistry({ scriptedLatencyMs: 0 }),
    {
      kind: 'team',
      name: 'research-team',
    },
    "Research the topic 'replay'.",
  );
  ops = await executed(opsRegistry(), { kind: 'agent', name: 'ops-agent' }, 'restart api');
});
afterAll(() => t.close());

async function executed(
  registry: Registry,
  entity: { kind: 'agent' | 'team'; name: string },
  input: string,
): Promise<RunExport> {
  const engine = new Engine({ store: t.store, registry });
  const run = await engine.createRun({ entity, input, checkpoint: 'tool-batch' });
  await engine.execute(run.runId, { reason: 'run' });
  return exportRun(t.store, run.runId);
}

const scripted = (decide: typeof researcherScript) => new ScriptedModel({ decide });
const text = (
  name: string,
  parameters: z.ZodObject,
  options: Partial<{ needsApproval: boolean }> = {},
) => tool({ name, description: name, parameters, execute: () => 'x', ...options });

/** The research team as it might be after a change: its researcher's tools, its members, its outputType. */
function changedResearchTeam(change: {
  tools?: Tool[];
  memberName?: string;
  outputType?: z.ZodType;
}): Registry {
  const researcher = new Agent({
    name: change.memberName ?? 'researcher',
    model: scripted(researcherScript),
    tools: change.tools ?? [
      text('slow_search', z.object({ query: z.string() })),
      text('slow_fetch_detail', z.object({ item: z.string() })),
    ],
  });
  return new Registry({
    teams: [
      new Team({
        name: 'research-team',
        model: scripted(teamScript),
        members: [researcher],
        ...(change.outputType && { outputType: change.outputType }),
      }),
    ],
  });
}

describe('replay against changed code', () => {
  it('the unchanged definition (rebuilt) replays clean', async () => {
    expect(await replayRun(changedResearchTeam({}), research)).toMatchObject({ ok: true });
  });

  it("a tool whose schema changed: the member run's turn, the tool and the field", async () => {
    const registry = changedResearchTeam({
      tools: [
        text('slow_search', z.object({ query: z.string() })),
        text('slow_fetch_detail', z.object({ item: z.number() })),
      ],
    });
    const result = await replayRun(registry, research);
    const member = research.members[0]!;
    expect(result).toMatchObject({
      ok: false,
      divergence: {
        turn: 2,
        tool: 'slow_fetch_detail',
        field: 'item',
        runId: member.run_id,
        entity: member.entity.name,
      },
    });
    expect(describeReplay(result, research.run.run_id)).toBe(
      `member run ${member.run_id} (${member.entity.name}) turn 2: tool "slow_fetch_detail" args {"item":"result-a"} no longer valid: item: Invalid input: expected number, received string`,
    );
  });

  it('a tool that is gone', async () => {
    const registry = changedResearchTeam({
      tools: [text('slow_fetch_detail', z.object({ item: z.string() }))],
    });
    expect(await replayRun(registry, research)).toMatchObject({
      ok: false,
      divergence: {
        turn: 1,
        tool: 'slow_search',
        message: 'tool "slow_search" no longer exists on agent "researcher"',
      },
    });
  });

  it('a delegation to a member the team no longer has', async () => {
    const result = await replayRun(changedResearchTeam({ memberName: 'analyst' }), research);
    expect(result).toMatchObject({
      ok: false,
      divergence: {
        turn: 1,
        tool: 'delegate_task_to_member',
        field: 'member',
        runId: research.run.run_id,
        message: 'delegation names member "researcher", which team "research-team" no longer has',
      },
    });
    expect(describeReplay(result, research.run.run_id)).toMatch(/^turn 1: delegation names/);
  });

  it('a tool that gates now, where the stored call ran without a person', async () => {
    const registry = changedResearchTeam({
      tools: [
        text('slow_search', z.object({ query: z.string() }), { needsApproval: true }),
        text('slow_fetch_detail', z.object({ item: z.string() })),
      ],
    });
    expect(await replayRun(registry, research)).toMatchObject({
      ok: false,
      divergence: {
        turn: 1,
        tool: 'slow_search',
        message: expect.stringMatching(/now waits for a person/),
      },
    });
  });

  it('a tool that no longer gates, where the stored call waited for approval', async () => {
    const ungated = new Agent({
      name: 'ops-agent',
      model: new ScriptedModel({ decide: opsScript }),
      tools: [checkStatus, text('restart_service', z.object({ service: z.string() })), askOperator],
    });
    expect(await replayRun(new Registry({ agents: [ungated] }), ops)).toMatchObject({
      ok: false,
      divergence: {
        turn: 1,
        tool: 'restart_service',
        message: expect.stringMatching(
          /^tool "restart_service" no longer waits for a person: the stored call had approval action act_/,
        ),
      },
    });
  });

  it('an outputType the final answer does not parse', async () => {
    const registry = changedResearchTeam({ outputType: z.object({ summary: z.string() }) });
    expect(await replayRun(registry, research)).toMatchObject({
      ok: false,
      divergence: {
        turn: 2,
        runId: research.run.run_id,
        message: expect.stringMatching(
          /^the final answer no longer matches the outputType: it is not JSON/,
        ),
      },
    });
  });

  it('an entity the registry no longer has', async () => {
    expect(await replayRun(opsRegistry(), research)).toMatchObject({
      ok: false,
      divergence: { turn: 0, message: 'team "research-team" is not in the registry' },
    });
  });
});
