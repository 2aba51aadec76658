import { Agent, AmbiguousEntityError, definitionHashOf, Registry, Team } from '@cairn/engine';
import { ScriptedModel } from '@cairn/engine/testing';
import { describe, expect, it } from 'vitest';
import { ServedEntityCatalog } from './served-entities.js';
import { useStoreTestContext } from './test-support/store-test-context.js';

const ctx = useStoreTestContext();

const model = new ScriptedModel({ decide: () => ({ text: 'ok' }) });
const teamWith = (name: string, members: Agent[]) => new Team({ name, model, members });

describe('ServedEntityCatalog names', () => {
  it('validates member paths and unique plain names from what a worker announced, and refuses a shared plain name naming the paths', async () => {
    const registry = new Registry({
      teams: [
        teamWith('team-a', [new Agent({ name: 'researcher', model }), new Agent({ name: 'writer', model })]),
        teamWith('team-b', [new Agent({ name: 'researcher', model })]),
      ],
    });
    const catalog = new ServedEntityCatalog(ctx.db);
    await catalog.record('worker-1', registry.describeAll());

    expect(await catalog.describe({ kind: 'agent', name: 'team-b/researcher' })).toMatchObject({ name: 'team-b/researcher' });
    expect(await catalog.describe({ kind: 'agent', name: 'writer' })).toMatchObject({ name: 'writer' });
    expect(await catalog.describe({ kind: 'agent', name: 'team-c/researcher' })).toBeUndefined();
    expect(await catalog.describe({ kind: 'agent', name: 'editor' })).toBeUndefined();
    const ambiguous = catalog.describe({ kind: 'agent', name: 'researcher' });
    await expect(ambiguous).rejects.toThrow(AmbiguousEntityError);
    await expect(ambiguous).rejects.toThrow('agent "researcher" is ambiguous: use "team-a/researcher" or "team-b/researcher"');
  });
});

describe('ServedEntityCatalog definition hash', () => {
  it('with no live worker, is the definition refreshed last: rolled back to v1, then every worker stopped, new runs still go to v1', async () => {
    const catalog = new ServedEntityCatalog(ctx.db);
    const [v1, v2] = ['Answer briefly.', 'Answer at length.'].map((instructions) => new Agent({ name: 'answerer', instructions, model }));
    const at = (minutesAgo: number) => new Date(Date.now() - minutesAgo * 60_000);
    await catalog.record('old', new Registry({ agents: [v1!] }).describeAll());
    await catalog.record('new', new Registry({ agents: [v2!] }).describeAll());
    // v1 first seen a day ago, v2 an hour ago; rolled back: v1's workers refreshed last, 10 minutes ago, then all stopped.
    const seen = async (agent: Agent, first: Date, last: Date) =>
      ctx.db.updateTable('served_entities').set({ first_seen_at: first, last_seen_at: last }).where('definition_hash', '=', definitionHashOf(agent)).execute();
    await seen(v1!, at(24 * 60), at(10));
    await seen(v2!, at(60), at(50));
    expect((await catalog.describe({ kind: 'agent', name: 'answerer' }))?.definitionHash).toBe(definitionHashOf(v1!));
  });
});
