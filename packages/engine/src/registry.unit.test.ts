import { describe, expect, it } from 'vitest';
import { Agent } from './agent.js';
import { AmbiguousEntityError, EntityNotFoundError, UserError } from './errors.js';
import { Registry } from './registry.js';
import { Team } from './team.js';
import { ScriptedModel } from './testing/scripted-model.js';

const model = new ScriptedModel({ decide: () => ({ text: 'ok' }) });
const agent = (name: string, instructions = '') => new Agent({ name, model, instructions });
const team = (name: string, members: (Agent | Team)[]) => new Team({ name, model, members });

describe('Registry names', () => {
  const webResearcher = agent('researcher', 'search the web');
  const paperResearcher = agent('researcher', 'read papers');
  const teamA = team('team-a', [webResearcher, agent('writer')]);
  const teamB = team('team-b', [paperResearcher]);
  const registry = new Registry({ teams: [teamA, teamB] });

  it('names each team its own member by path, so two teams can each have a different researcher', () => {
    expect(registry.get({ kind: 'agent', name: 'team-a/researcher' })).toBe(webResearcher);
    expect(registry.get({ kind: 'agent', name: 'team-b/researcher' })).toBe(paperResearcher);
    expect(registry.describe({ kind: 'agent', name: 'team-b/researcher' })).toMatchObject({
      kind: 'agent',
      name: 'team-b/researcher',
      checkpoint: 'tool-batch',
    });
    // Each path describes its own member, with that member's definition.
    expect(
      registry.describe({ kind: 'agent', name: 'team-a/researcher' })!.definitionHash,
    ).not.toBe(registry.describe({ kind: 'agent', name: 'team-b/researcher' })!.definitionHash);
  });

  it('refuses a shared plain name, naming the paths to use, and never picks one', () => {
    const ref = { kind: 'agent', name: 'researcher' } as const;
    expect(registry.has(ref)).toBe(false);
    expect(() => registry.get(ref)).toThrow(AmbiguousEntityError);
    expect(() => registry.describe(ref)).toThrow(
      'agent "researcher" is ambiguous: use "team-a/researcher" or "team-b/researcher"',
    );
    // Still an EntityNotFoundError for code that handles unknown names (the producer answers 404).
    expect(() => registry.get(ref)).toThrow(EntityNotFoundError);
  });

  it('lists paths and unique plain names, never an ambiguous one', () => {
    expect(registry.list()).toEqual(
      expect.arrayContaining([
        { kind: 'team', name: 'team-a' },
        { kind: 'team', name: 'team-b' },
        { kind: 'agent', name: 'team-a/researcher' },
        { kind: 'agent', name: 'team-b/researcher' },
        { kind: 'agent', name: 'team-a/writer' },
        { kind: 'agent', name: 'writer' },
      ]),
    );
    expect(registry.list()).toHaveLength(6);
    expect(registry.describeAll().map((e) => e.name)).not.toContain('researcher');
  });

  it('still resolves a member by its plain name while it is unique (member runs stored before paths, a member run on its own)', () => {
    expect(registry.get({ kind: 'agent', name: 'writer' })).toBe(teamA.member('writer'));
    const solo = new Registry({ teams: [teamA] });
    expect(solo.get({ kind: 'agent', name: 'researcher' })).toBe(webResearcher);
  });

  it('treats one agent shared by two teams as one entity, under both paths and its plain name', () => {
    const shared = agent('researcher');
    const both = new Registry({ teams: [team('team-a', [shared]), team('team-b', [shared])] });
    expect(both.get({ kind: 'agent', name: 'researcher' })).toBe(shared);
    expect(both.get({ kind: 'agent', name: 'team-b/researcher' })).toBe(shared);
  });

  it('names members of nested teams by their whole path, and from a nested team run on its own', () => {
    const deepResearcher = agent('researcher', 'deep');
    const inner = team('inner', [deepResearcher]);
    const outer = team('outer', [inner, agent('editor')]);
    const nested = new Registry({ teams: [outer, teamB] });
    expect(nested.get({ kind: 'team', name: 'outer/inner' })).toBe(inner);
    expect(nested.get({ kind: 'agent', name: 'outer/inner/researcher' })).toBe(deepResearcher);
    // A run of `inner` on its own names its members `inner/...`.
    expect(nested.get({ kind: 'agent', name: 'inner/researcher' })).toBe(deepResearcher);
    expect(() => nested.get({ kind: 'agent', name: 'researcher' })).toThrow(
      'agent "researcher" is ambiguous: use "outer/inner/researcher" or "team-b/researcher"',
    );
  });

  it('does not find a path that leaves the tree or names the wrong kind', () => {
    for (const ref of [
      { kind: 'agent', name: 'team-a/nobody' },
      { kind: 'agent', name: 'team-b/researcher/more' },
      { kind: 'team', name: 'team-a/researcher' },
      { kind: 'agent', name: 'team-c/researcher' },
    ] as const) {
      expect(registry.has(ref)).toBe(false);
      expect(() => registry.get(ref)).toThrow(`no ${ref.kind} named "${ref.name}" in the registry`);
    }
  });

  it('lets a top-level entity keep its plain name beside a member of the same name', () => {
    const standalone = agent('researcher', 'on its own');
    const withTopLevel = new Registry({ agents: [standalone], teams: [teamA, teamB] });
    expect(withTopLevel.get({ kind: 'agent', name: 'researcher' })).toBe(standalone);
    expect(withTopLevel.get({ kind: 'agent', name: 'team-a/researcher' })).toBe(webResearcher);
  });

  it('refuses two different top-level entities of one kind with one name', () => {
    expect(() => new Registry({ agents: [agent('researcher'), agent('researcher')] })).toThrow(
      'registry: two different agents are named "researcher"',
    );
    expect(() => new Registry({ teams: [teamA, team('team-a', [agent('x')])] })).toThrow(UserError);
  });

  it('refuses "/" in an entity name at definition, naming the name', () => {
    expect(() => agent('team-a/researcher')).toThrow(
      'agent name "team-a/researcher" is invalid: "/" is reserved for member paths',
    );
    expect(() => team('a/b', [agent('x')])).toThrow(UserError);
  });
});
