import { Agent, Engine, LeaseLostError, Registry, Team, tool, type Model } from '@cairn/engine';
import { ScriptedModel } from '@cairn/engine/testing';
import { researcherScript, teamScript } from '@cairn/research-team';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { openTestStore, type TestStore } from '../helpers/test-store.js';

let t: TestStore;
let toolRuns: number;
let usurp: ((runId: string) => Promise<void>) | undefined;
beforeEach(async () => {
  t = await openTestStore();
  toolRuns = 0;
  usurp = undefined;
});
afterEach(async () => {
  await t.close();
});

const researchTool = (name: string, output: (arg: string) => string) =>
  tool({
    name,
    description: name,
    parameters: z.object({ query: z.string().optional(), item: z.string().optional() }),
    execute: (args) => {
      toolRuns += 1;
      return output(args.query ?? args.item ?? '');
    },
  });

/** The research team, whose model lets `usurp` claim the team run (another worker taking over) just before it delegates. */
function engine(): Engine {
  const scriptedTeam = new ScriptedModel({ decide: teamScript });
  const teamModel: Model = {
    name: 'team-with-takeover',
    respond: async (request) => {
      const runId = (request.messages[0] as { content: string }).content.split('|')[1]!;
      await usurp?.(runId);
      usurp = undefined;
      return scriptedTeam.respond(request);
    },
  };
  const researcher = new Agent({
    name: 'researcher',
    model: new ScriptedModel({ decide: researcherScript }),
    tools: [
      researchTool('slow_search', (q) => `Top 3 results for '${q}': result-a, result-b, result-c`),
      researchTool('slow_fetch_detail', (item) => `Detail for ${item}`),
    ],
  });
  const team = new Team({
    name: 'research-team',
    model: teamModel,
    members: [researcher],
    checkpoint: 'tool-batch',
  });
  return new Engine({
    store: t.store,
    registry: new Registry({ teams: [team] }),
    workerId: 'zombie',
  });
}

async function createTeamRun(): Promise<string> {
  const run = await t.store.createRun({
    entity: { kind: 'team', name: 'research-team' },
    input: 'placeholder',
    checkpoint: 'tool-batch',
  });
  // The model reads the run id from the input, to know which run to take over.
  await t.db
    .updateTable('runs')
    .set({ input: `Research 'x'|${run.runId}` })
    .where('run_id', '=', run.runId)
    .execute();
  return run.runId;
}

const takeOver = async (runId: string) => {
  await t.store.claimRun(runId, { workerId: 'new-owner', reason: 'recovered' });
};

describe('a team execution that lost its run (a zombie)', () => {
  it('cannot start a member run: the create is fenced by the team epoch, and no member tool runs', async () => {
    const e = engine();
    const runId = await createTeamRun();
    usurp = takeOver;
    await expect(e.execute(runId, { reason: 'run' })).rejects.toBeInstanceOf(LeaseLostError);
    expect(await t.store.listChildRuns(runId)).toEqual([]);
    expect(toolRuns).toBe(0);
  });

  it('cannot claim the member run a delegation left unfinished either', async () => {
    const e = engine();
    const runId = await createTeamRun();
    const member = await t.store.createRun({
      entity: { kind: 'agent', name: 'researcher' },
      input: "Research 'x'",
      parentRunId: runId,
      parentToolCallId: 'call_1_1',
      checkpoint: 'tool-batch',
    });
    usurp = takeOver;
    await expect(e.execute(runId, { reason: 'run' })).rejects.toBeInstanceOf(LeaseLostError);
    expect(await t.store.getRun(member.runId)).toMatchObject({ status: 'PENDING', epoch: 0 });
    expect(toolRuns).toBe(0);
  });

  it('while the team still holds its run, delegation creates and resumes member runs as before', async () => {
    const e = engine();
    const runId = await createTeamRun();
    const result = await e.execute(runId, { reason: 'run' });
    expect(result.outcome === 'finished' && result.run.status).toBe('COMPLETED');
    expect((await t.store.listChildRuns(runId)).map((c) => c.status)).toEqual(['COMPLETED']);
    expect(toolRuns).toBe(4);
  });
});
