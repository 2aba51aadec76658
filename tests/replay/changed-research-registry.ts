import { Agent, Registry, Team, tool } from '@cairn/engine';
import { ScriptedModel } from '@cairn/engine/testing';
import { researcherScript, teamScript } from '@cairn/research-team';
import { z } from 'zod';

/** @public The research team after a change that breaks its stored runs: `slow_fetch_detail` takes a number. */
export function createRegistry(): Registry {
  const tools = [
    tool({
      name: 'slow_search',
      description: 'search',
      parameters: z.object({ query: z.string() }),
      execute: () => '',
    }),
    tool({
      name: 'slow_fetch_detail',
      description: 'fetch',
      parameters: z.object({ item: z.number() }),
      execute: () => '',
    }),
  ];
  const researcher = new Agent({
    name: 'researcher',
    model: new ScriptedModel({ decide: researcherScript }),
    tools,
  });
  const team = new Team({
    name: 'research-team',
    model: new ScriptedModel({ decide: teamScript }),
    members: [researcher],
  });
  return new Registry({ teams: [team] });
}
