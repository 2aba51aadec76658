import {
  Agent,
  AmbiguousEntityError,
  DELEGATE_TOOL_NAME,
  Engine,
  Registry,
  Team,
  tool,
} from '@cairn/engine';
import { firstUserInput, ScriptedModel, toolResults } from '@cairn/engine/testing';
import type { RunView } from '@cairn/store';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { openTestStore, type TestStore } from '../helpers/test-store.js';

let t: TestStore;
beforeEach(async () => {
  t = await openTestStore();
});
afterEach(async () => {
  await t.close();
});

/** A researcher whose model calls `lookup` once (fresh tool-call ids, as a real model's) and reports its result. */
function researcher(lookup: ReturnType<typeof lookupTool>, instructions: string): Agent {
  return new Agent({
    name: 'researcher',
    instructions,
    tools: [lookup],
    model: new ScriptedModel({
      toolCallIds: 'fresh',
      decide: ({ messages, instructions: seen }) => {
        const results = toolResults(messages);
        if (results.length === 0)
          return {
            toolCalls: [{ name: lookup.name, arguments: { topic: firstUserInput(messages) } }],
          };
        return { text: `${seen}: ${results[0]!.content}` };
      },
    }),
  });
}

function lookupTool(name: string, source: string, options: { needsApproval?: boolean } = {}) {
  return tool({
    name,
    description: `Looks a topic up in ${source}`,
    parameters: z.object({ topic: z.string() }),
    ...(options.needsApproval && { needsApproval: true }),
    execute: ({ topic }) => `${source} on ${topic}`,
  });
}

/** A team that delegates the task to its `researcher` and answers with the report. */
function teamOf(name: string, member: Agent): Team {
  return new Team({
    name,
    members: [member],
    model: new ScriptedModel({
      toolCallIds: 'fresh',
      decide: ({ messages }) => {
        const reports = toolResults(messages, DELEGATE_TOOL_NAME);
        if (reports.length === 0) {
          return {
            toolCalls: [
              {
                name: DELEGATE_TOOL_NAME,
                arguments: { member: 'researcher', task: firstUserInput(messages) },
              },
            ],
          };
        }
        return { text: `${name}: ${reports[0]!.content}` };
      },
    }),
  });
}

const toolNames = (view: RunView) => view.tools.map((c) => c.name);

describe('member names scoped to their team', () => {
  it('two teams each delegate to their own researcher: each member run is named by its path and uses its team’s tools and instructions', async () => {
    const webTeam = teamOf(
      'team-a',
      researcher(lookupTool('search_web', 'the web'), 'web researcher'),
    );
    const paperTeam = teamOf(
      'team-b',
      researcher(lookupTool('search_papers', 'the papers'), 'paper researcher'),
    );
    const engine = new Engine({
      store: t.store,
      registry: new Registry({ teams: [webTeam, paperTeam] }),
      workerId: 'local',
    });

    const a = await engine.run(webTeam, 'tides');
    const b = await engine.run(paperTeam, 'tides');
    expect([a.status, a.content]).toEqual([
      'COMPLETED',
      'team-a: web researcher: the web on tides',
    ]);
    expect([b.status, b.content]).toEqual([
      'COMPLETED',
      'team-b: paper researcher: the papers on tides',
    ]);

    const [memberA] = (await t.store.getRunView(a.runId))!.member_runs;
    const [memberB] = (await t.store.getRunView(b.runId))!.member_runs;
    expect(memberA!.entity).toEqual({ kind: 'agent', name: 'team-a/researcher' });
    expect(memberB!.entity).toEqual({ kind: 'agent', name: 'team-b/researcher' });
    expect(toolNames(memberA!)).toEqual(['search_web']);
    expect(toolNames(memberB!)).toEqual(['search_papers']);
    expect(memberA!.content).toBe('web researcher: the web on tides');
  });

  it('creates a run of a member by its path, and refuses the shared plain name naming both paths', async () => {
    const webTeam = teamOf(
      'team-a',
      researcher(lookupTool('search_web', 'the web'), 'web researcher'),
    );
    const paperTeam = teamOf(
      'team-b',
      researcher(lookupTool('search_papers', 'the papers'), 'paper researcher'),
    );
    const engine = new Engine({
      store: t.store,
      registry: new Registry({ teams: [webTeam, paperTeam] }),
      workerId: 'local',
    });

    const created = await engine.createRun({
      entity: { kind: 'agent', name: 'team-b/researcher' },
      input: 'reefs',
    });
    const done = await engine.execute(created.runId, { reason: 'run' });
    expect(done.outcome === 'finished' && done.run.content).toBe(
      'paper researcher: the papers on reefs',
    );

    const plain = engine.createRun({
      entity: { kind: 'agent', name: 'researcher' },
      input: 'reefs',
    });
    await expect(plain).rejects.toThrow(AmbiguousEntityError);
    await expect(plain).rejects.toThrow(
      'agent "researcher" is ambiguous: use "team-a/researcher" or "team-b/researcher"',
    );
    // Nothing was created for the refused request.
    expect(
      (await t.store.listRuns({ limit: 10, topLevelOnly: false })).runs.map((r) => r.entity.name),
    ).toEqual(['team-b/researcher']);
  });

  it('a member run stored under its plain name (before paths) resumes as its own team’s member, though another team now has one of that name', async () => {
    const handover = new AbortController();
    const slowWeb = tool({
      name: 'search_web',
      description: 'Looks a topic up in the web',
      parameters: z.object({ topic: z.string() }),
      execute: ({ topic }) => {
        handover.abort();
        return `the web on ${topic}`;
      },
    });
    const webTeam = teamOf('team-a', researcher(slowWeb, 'web researcher'));
    const engine = new Engine({
      store: t.store,
      registry: new Registry({ teams: [webTeam] }),
      workerId: 'old',
    });
    const run = await engine.createRun({
      entity: { kind: 'team', name: 'team-a' },
      input: 'tides',
    });
    expect(await engine.execute(run.runId, { reason: 'run', handover: handover.signal })).toEqual({
      outcome: 'handed-over',
      runId: run.runId,
    });
    const [member] = await t.store.listChildRuns(run.runId);
    // As a member run was stored before members were named by path.
    await t.db
      .updateTable('runs')
      .set({ entity_name: 'researcher' })
      .where('run_id', '=', member!.runId)
      .execute();

    const paperTeam = teamOf(
      'team-b',
      researcher(lookupTool('search_papers', 'the papers'), 'paper researcher'),
    );
    const upgraded = new Engine({
      store: t.store,
      registry: new Registry({ teams: [webTeam, paperTeam] }),
      workerId: 'new',
    });
    const resumed = await upgraded.execute(run.runId, { reason: 'handover' });
    expect(resumed.outcome === 'finished' && resumed.run.content).toBe(
      'team-a: web researcher: the web on tides',
    );
    const [view] = (await t.store.getRunView(run.runId))!.member_runs;
    expect([view!.run_id, view!.entity.name, view!.status]).toEqual([
      member!.runId,
      'researcher',
      'COMPLETED',
    ]);
    expect(toolNames(view!)).toEqual(['search_web']);
  });

  it('a gated tool of a scoped member pauses with member_path ["team-a", "researcher"]', async () => {
    const webTeam = teamOf(
      'team-a',
      researcher(lookupTool('search_web', 'the web', { needsApproval: true }), 'web researcher'),
    );
    const paperTeam = teamOf(
      'team-b',
      researcher(lookupTool('search_papers', 'the papers'), 'paper researcher'),
    );
    const engine = new Engine({
      store: t.store,
      registry: new Registry({ teams: [webTeam, paperTeam] }),
      workerId: 'local',
    });

    const paused = await engine.run(webTeam, 'tides');
    expect(paused.status).toBe('PAUSED');
    const [action] = await t.store.listPendingActions(paused.runId);
    expect(action).toMatchObject({
      tool: 'search_web',
      memberPath: ['team-a', 'researcher'],
      status: 'pending',
    });
    const view = (await t.store.getRunView(paused.runId))!;
    expect(view.pending_actions.map((p) => p.member_path)).toEqual([['team-a', 'researcher']]);
  });
});
