import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent, type AgentOptions } from './agent.js';
import { definitionHashOf, DEFINITION_HASH_LENGTH } from './definition-hash.js';
import { UserError } from './errors.js';
import { Registry } from './registry.js';
import { Team } from './team.js';
import { ScriptedModel } from './testing/scripted-model.js';
import { tool } from './tool.js';

const model = new ScriptedModel({ name: 'openai:gpt-5.4', decide: () => ({ text: 'ok' }) });

function search(options: { description?: string; parameters?: z.ZodObject; result?: string } = {}) {
  return tool({
    name: 'search',
    description: options.description ?? 'Searches the web',
    parameters: options.parameters ?? z.object({ query: z.string(), limit: z.number().int() }),
    execute: () => options.result ?? 'found',
  });
}

const lookup = tool({
  name: 'lookup',
  description: 'Looks a word up',
  parameters: z.object({ word: z.string() }),
  execute: () => 'a word',
});

function researcher(overrides: Partial<AgentOptions> = {}): Agent {
  return new Agent({
    name: 'researcher',
    role: 'Finds sources',
    model,
    tools: [search(), lookup],
    instructions: 'Cite every source.',
    checkpoint: 'tool-batch',
    ...overrides,
  });
}

function team(member: Agent, overrides: { instructions?: string } = {}): Team {
  return new Team({
    name: 'research-team',
    model,
    members: [member],
    instructions: overrides.instructions ?? 'Delegate.',
  });
}

describe('definitionHashOf', () => {
  it('is the same for the same definition built again, whatever the order of its tools or members', () => {
    expect(definitionHashOf(researcher({ tools: [lookup, search()] }))).toBe(
      definitionHashOf(researcher()),
    );
    const writer = new Agent({ name: 'writer', model, instructions: 'Write.' });
    const a = new Team({ name: 't', model, members: [researcher(), writer] });
    const b = new Team({ name: 't', model, members: [writer, researcher()] });
    expect(definitionHashOf(a)).toBe(definitionHashOf(b));
  });

  it('is the same in every process and every Cairn release for an unchanged definition (a changed digest would strand every run in flight at an upgrade)', () => {
    // Pinned: computed once from this definition; if it changes, the digest's canonical form changed.
    expect(definitionHashOf(researcher())).toBe('fbbdc32d690244ee');
    expect(definitionHashOf(researcher())).toMatch(
      new RegExp(`^[0-9a-f]{${DEFINITION_HASH_LENGTH}}$`),
    );
  });

  it('changes with each field docs/agents-and-teams.md lists: name, role and instructions, model id, tool names and schemas, checkpoint mode, version', () => {
    const base = definitionHashOf(researcher());
    const changed = [
      researcher({ name: 'researcher2' }),
      researcher({ role: 'Finds primary sources' }),
      researcher({ instructions: 'Cite every source twice.' }),
      researcher({
        model: new ScriptedModel({ name: 'openai:gpt-5.5', decide: () => ({ text: 'ok' }) }),
      }),
      researcher({ tools: [search()] }),
      researcher({
        tools: [search({ parameters: z.object({ query: z.string(), limit: z.number() }) }), lookup],
      }),
      researcher({
        tools: [
          search({
            parameters: z.object({ query: z.string(), limit: z.number().int().optional() }),
          }),
          lookup,
        ],
      }),
      researcher({ checkpoint: 'tool-call' }),
      researcher({ version: '2' }),
    ].map(definitionHashOf);
    expect(new Set([base, ...changed]).size).toBe(changed.length + 1);
  });

  it("changes a team's hash when one of its members changes, or the team's own definition does", () => {
    const base = definitionHashOf(team(researcher()));
    expect(definitionHashOf(team(researcher({ instructions: 'Cite nothing.' })))).not.toBe(base);
    expect(definitionHashOf(team(researcher({ tools: [lookup] })))).not.toBe(base);
    expect(definitionHashOf(team(researcher(), { instructions: 'Delegate twice.' }))).not.toBe(
      base,
    );
    expect(definitionHashOf(team(researcher()))).toBe(base);
  });

  it('is unchanged by what is not part of the definition: tool descriptions and code, maxTurns, outputType, onDefinitionChange', () => {
    const base = definitionHashOf(researcher());
    const same = [
      researcher({ tools: [search({ description: 'Looks things up online' }), lookup] }),
      researcher({ tools: [search({ result: 'other code' }), lookup] }),
      researcher({ maxTurns: 3 }),
      researcher({ outputType: z.object({ answer: z.string() }) }),
      researcher({ onDefinitionChange: 'resume' }),
    ].map(definitionHashOf);
    expect(same).toEqual(same.map(() => base));
  });

  it('is what the registry gives run creation for the entity', () => {
    const agent = researcher();
    expect(
      new Registry({ agents: [agent] }).describe({ kind: 'agent', name: 'researcher' }),
    ).toEqual({
      kind: 'agent',
      name: 'researcher',
      checkpoint: 'tool-batch',
      definitionHash: definitionHashOf(agent),
    });
  });
});

describe('version and onDefinitionChange options', () => {
  it('refuses an empty version and an unknown onDefinitionChange, naming the field', () => {
    expect(() => researcher({ version: ' ' })).toThrow(
      new UserError('agent "researcher": version must be a non-empty string'),
    );
    expect(() => researcher({ onDefinitionChange: 'ignore' as never })).toThrow(
      new UserError('agent "researcher": onDefinitionChange must be one of error, resume'),
    );
    expect(
      () =>
        new Team({
          name: 't',
          model,
          members: [researcher()],
          onDefinitionChange: 'always' as never,
        }),
    ).toThrow(/team "t": onDefinitionChange must be one of error, resume/);
  });

  it("defaults onDefinitionChange to 'error'", () => {
    expect(researcher().onDefinitionChange).toBe('error');
    expect(team(researcher()).onDefinitionChange).toBe('error');
  });
});
